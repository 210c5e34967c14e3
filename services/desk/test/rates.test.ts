import request from 'supertest';
import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import {
  BASE,
  bearer,
  createClient,
  createTicket,
  createUser,
  newTenant,
  snapshot,
  startHelpdesk,
} from './support/helpdesk';

let desk: TestDesk;
let http: Api;

beforeAll(async () => ({ desk, http } = await startHelpdesk()));
afterAll(() => desk.close());

type Tenant = Awaited<ReturnType<typeof newTenant>>;
type Entry = {
  id: string;
  minutes: number;
  hourly_rate: number | null;
  currency: string;
  amount: number | null;
  billable: boolean;
};

async function record(caller: Tenant, ticketId: string, body: Record<string, unknown>) {
  return (await http.post(`${BASE}/tickets/${ticketId}/time-entries`).set(bearer(caller.token)).send(body).expect(201))
    .body as Entry;
}

describe('rates of clients', () => {
  test(
    'When a client is created without a rate, then it has hourly_rate null and currency ' +
      'EUR; with them, they are stored and can be changed and cleared',
    async () => {
      const caller = await newTenant(desk);
      const plain = await createClient(http, caller.token);
      expect(plain).toMatchObject({ hourly_rate: null, currency: 'EUR' });

      const priced = await createClient(http, caller.token, { hourly_rate: 9500, currency: 'CHF' });
      expect(priced).toMatchObject({ hourly_rate: 9500, currency: 'CHF' });
      expect(await desk.db.client.findUniqueOrThrow({ where: { id: priced.id } })).toMatchObject({
        hourlyRate: 9500,
        currency: 'CHF',
      });

      const changed = await http
        .patch(`${BASE}/clients/${priced.id}`)
        .set(bearer(caller.token))
        .send({ hourly_rate: 12000, currency: 'EUR' })
        .expect(200);
      expect(changed.body).toMatchObject({ hourly_rate: 12000, currency: 'EUR' });
      const cleared = await http
        .patch(`${BASE}/clients/${priced.id}`)
        .set(bearer(caller.token))
        .send({ hourly_rate: null })
        .expect(200);
      expect(cleared.body).toMatchObject({ hourly_rate: null, currency: 'EUR' });
    },
  );

  test(
    'When a rate is negative, a fraction, past 10,000,000 or a string, or a currency is no ISO ' +
      '4217 code, then it answers 400 naming the field and stores nothing',
    async () => {
      const caller = await newTenant(desk);
      const client = await createClient(http, caller.token);
      const before = await snapshot(desk);
      for (const [body, field] of [
        [{ hourly_rate: -1 }, 'hourly_rate'],
        [{ hourly_rate: 95.5 }, 'hourly_rate'],
        [{ hourly_rate: 10_000_001 }, 'hourly_rate'],
        [{ hourly_rate: '9500' }, 'hourly_rate'],
        [{ currency: 'eur' }, 'currency'],
        [{ currency: 'XYZ' }, 'currency'],
        [{ currency: null }, 'currency'],
      ] as const) {
        const created = await http
          .post(`${BASE}/clients`)
          .set(bearer(caller.token))
          .send({ name: `Client ${Math.random()}`, ...body })
          .expect(400);
        expect(created.body.errors.map((error: { field: string }) => error.field)).toContain(field);
        await http.patch(`${BASE}/clients/${client.id}`).set(bearer(caller.token)).send(body).expect(400);
      }
      expect(await snapshot(desk)).toEqual(before);
    },
  );
});

describe('rates and amounts of time entries', () => {
  test(
    "When time is recorded, then it takes its client's rate and currency unless it names " +
      'its own, and its amount is minutes × rate / 60 rounded half up',
    async () => {
      const caller = await newTenant(desk);
      const client = await createClient(http, caller.token, { hourly_rate: 9500, currency: 'EUR' });
      const ticket = await createTicket(http, caller.token, { client_id: client.id });
      const user = await createUser(http, caller.token);

      expect(await record(caller, ticket.id, { user_id: user.id, minutes: 45 })).toMatchObject({
        hourly_rate: 9500,
        currency: 'EUR',
        amount: 7125,
      });
      // 7 minutes at 95.00 an hour: 1108.33… cents, rounded to 1108; 1 minute at 90 cents: 1.5 cents, rounded up to 2.
      expect(await record(caller, ticket.id, { user_id: user.id, minutes: 7 })).toMatchObject({ amount: 1108 });
      expect(await record(caller, ticket.id, { user_id: user.id, minutes: 1, hourly_rate: 90 })).toMatchObject({
        hourly_rate: 90,
        amount: 2,
      });
      expect(await record(caller, ticket.id, { user_id: user.id, minutes: 30, hourly_rate: null })).toMatchObject({
        hourly_rate: null,
        currency: 'EUR',
        amount: null,
      });
      const entry = await record(caller, ticket.id, { user_id: user.id, minutes: 60, hourly_rate: 15000 });
      const read = (await http.get(`${BASE}/time-entries/${entry.id}`).set(bearer(caller.token)).expect(200)).body;
      expect(read).toEqual(entry);
      expect(await desk.db.timeEntry.findUniqueOrThrow({ where: { id: entry.id } })).toMatchObject({
        hourlyRate: 15000,
        currency: 'EUR',
      });
    },
  );

  test(
    "When the client's rate changes later, then entries keep their price; a PATCH of " +
      'hourly_rate prices an entry again, and minutes change its amount',
    async () => {
      const caller = await newTenant(desk);
      const client = await createClient(http, caller.token, { hourly_rate: 6000, currency: 'USD' });
      const ticket = await createTicket(http, caller.token, { client_id: client.id });
      const user = await createUser(http, caller.token);
      const entry = await record(caller, ticket.id, { user_id: user.id, minutes: 90 });
      expect(entry).toMatchObject({ hourly_rate: 6000, currency: 'USD', amount: 9000 });

      await http
        .patch(`${BASE}/clients/${client.id}`)
        .set(bearer(caller.token))
        .send({ hourly_rate: 8000 })
        .expect(200);
      expect(
        (await http.get(`${BASE}/time-entries/${entry.id}`).set(bearer(caller.token)).expect(200)).body,
      ).toMatchObject({ hourly_rate: 6000, amount: 9000 });
      expect(await record(caller, ticket.id, { user_id: user.id, minutes: 90 })).toMatchObject({
        hourly_rate: 8000,
        amount: 12000,
      });

      const repriced = await http
        .patch(`${BASE}/time-entries/${entry.id}`)
        .set(bearer(caller.token))
        .send({ hourly_rate: 7000 })
        .expect(200);
      expect(repriced.body).toMatchObject({ hourly_rate: 7000, currency: 'USD', amount: 10500 });
      const longer = await http
        .patch(`${BASE}/time-entries/${entry.id}`)
        .set(bearer(caller.token))
        .send({ minutes: 100 })
        .expect(200);
      expect(longer.body).toMatchObject({ amount: 11667 });
      const unpriced = await http
        .patch(`${BASE}/time-entries/${entry.id}`)
        .set(bearer(caller.token))
        .send({ hourly_rate: null })
        .expect(200);
      expect(unpriced.body).toMatchObject({ hourly_rate: null, amount: null });
    },
  );

  test(
    'When entries are listed, then totals.amounts holds per currency the amounts and billable amounts ' +
      'of every matching entry, from the counters and with several filters alike',
    async () => {
      const caller = await newTenant(desk);
      const euro = await createClient(http, caller.token, { hourly_rate: 10000 });
      const franc = await createClient(http, caller.token, { hourly_rate: 6000, currency: 'CHF' });
      const euroTicket = await createTicket(http, caller.token, { client_id: euro.id });
      const francTicket = await createTicket(http, caller.token, { client_id: franc.id });
      const ann = await createUser(http, caller.token);
      const bob = await createUser(http, caller.token);
      await record(caller, euroTicket.id, { user_id: ann.id, minutes: 30, date: '2026-10-01' }); // 5000
      await record(caller, euroTicket.id, { user_id: bob.id, minutes: 45, date: '2026-10-02', billable: false }); // 7500, not billable
      await record(caller, euroTicket.id, { user_id: ann.id, minutes: 60, date: '2026-10-03', hourly_rate: null }); // no rate
      await record(caller, francTicket.id, { user_id: ann.id, minutes: 20, date: '2026-10-02' }); // 2000 CHF
      const totals = async (query: string) =>
        (await http.get(`${BASE}/time-entries?${query}`).set(bearer(caller.token)).expect(200)).body.totals;

      expect(await totals('')).toEqual({
        minutes: 155,
        billable_minutes: 110,
        amounts: [
          { currency: 'CHF', amount: 2000, billable_amount: 2000 },
          { currency: 'EUR', amount: 12500, billable_amount: 5000 },
        ],
      });
      expect((await totals(`client_id=${euro.id}`)).amounts).toEqual([
        { currency: 'EUR', amount: 12500, billable_amount: 5000 },
      ]);
      expect((await totals(`user_id=${ann.id}`)).amounts).toEqual([
        { currency: 'CHF', amount: 2000, billable_amount: 2000 },
        { currency: 'EUR', amount: 5000, billable_amount: 5000 },
      ]);
      expect((await totals('from=2026-10-02&to=2026-10-02')).amounts).toEqual([
        { currency: 'CHF', amount: 2000, billable_amount: 2000 },
        { currency: 'EUR', amount: 7500, billable_amount: 0 },
      ]);
      expect((await totals('billable=false')).amounts).toEqual([{ currency: 'EUR', amount: 7500, billable_amount: 0 }]);
      expect((await totals(`user_id=${ann.id}&from=2026-10-02`)).amounts).toEqual([
        { currency: 'CHF', amount: 2000, billable_amount: 2000 },
      ]);
      expect((await totals(`user_id=${bob.id}&billable=true`)).amounts).toEqual([]);
    },
  );

  test(
    'When a month is exported, then each row carries currency, hourly_rate and amount in ' +
      'minor units (one row per rate), empty where there is no rate',
    async () => {
      const caller = await newTenant(desk);
      const client = await createClient(http, caller.token, { name: 'Acme', hourly_rate: 9500 });
      const ticket = await createTicket(http, caller.token, { client_id: client.id, title: 'VPN' });
      const ann = await createUser(http, caller.token, { name: 'Ann' });
      await record(caller, ticket.id, { user_id: ann.id, minutes: 50, date: '2026-11-03' });
      await record(caller, ticket.id, { user_id: ann.id, minutes: 30, date: '2026-11-04' });
      await record(caller, ticket.id, { user_id: ann.id, minutes: 15, date: '2026-11-05', hourly_rate: 20000 });
      await record(caller, ticket.id, { user_id: ann.id, minutes: 10, date: '2026-11-06', hourly_rate: null });

      const response = await request(desk.app)
        .get(`${BASE}/exports/time?period=2026-11`)
        .set(bearer(caller.token))
        .expect(200);

      expect(response.text.split('\r\n')).toEqual([
        'client_id,client_name,ticket_number,ticket_title,user_id,user_name,billable_minutes,hours,currency,hourly_rate,amount',
        // 80 minutes at 95.00 an hour: 12666.67 cents, 12667.
        `${client.id},Acme,${ticket.number},VPN,${ann.id},Ann,80,1.33,EUR,9500,12667`,
        `${client.id},Acme,${ticket.number},VPN,${ann.id},Ann,15,0.25,EUR,20000,5000`,
        `${client.id},Acme,${ticket.number},VPN,${ann.id},Ann,10,0.17,EUR,,`,
        '',
      ]);
    },
  );
});
