import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createStandInReplica, READ_REPLICA_ROLE, type StandInReplica } from '@msp/testkit';
import { MIGRATIONS_DIR } from '../src/db';
import { startHr, type TestHr } from './support/hr';

/*
 * DATABASE_READ_URL: the lists (with their totals) and the payroll export read the replica; a write,
 * its answer and a single resource read the primary. The replica here never receives the primary's
 * writes (createStandInReplica) and refuses writes of its own, so what a read shows tells where it went.
 */

const API = '/api/v1';

let replica: StandInReplica;
let hr: TestHr;

beforeAll(async () => {
  replica = await createStandInReplica(MIGRATIONS_DIR);
  hr = await startHr({ readUrl: replica.url });
});
afterAll(async () => {
  await hr?.close();
  await replica?.drop();
});

function newCaller() {
  const tenantId = randomUUID();
  return { tenantId, auth: `Bearer ${hr.token({ tenant_id: tenantId, scope: 'read:hr write:hr read:payroll' })}` };
}

const get = (auth: string, path: string) => request(hr.app).get(`${API}${path}`).set('Authorization', auth);
const post = (auth: string, path: string, body: object) =>
  request(hr.app).post(`${API}${path}`).set('Authorization', auth).send(body);

test(
  'When an employee is created, then the POST answers the stored row, GET by id ' +
    'finds it, and the list read on the replica does not show it yet',
  async () => {
    const { tenantId, auth } = newCaller();
    const userId = randomUUID();

    const created = await post(auth, '/employees', {
      user_id: userId,
      personnel_number: '4711',
      name: 'Erika Mustermann',
    });

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ user_id: userId, personnel_number: '4711', name: 'Erika Mustermann' });
    const single = await get(auth, `/employees/${created.body.id}`);
    expect(single.status).toBe(200);
    expect(single.body.id).toBe(created.body.id);
    const list = await get(auth, '/employees');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    expect(list.body.pagination.total).toBe(0);
    const stored = await hr.db.employee.findMany({ where: { tenantId } });
    expect(stored.map((row: { id: string }) => row.id)).toEqual([created.body.id]);
  },
);

test(
  'When an employee has a contract, a timesheet and a leave, then each is answered by ' +
    'its POST and none is in its list yet, nor in the payroll export',
  async () => {
    const { auth } = newCaller();
    const userId = randomUUID();
    const employee = await post(auth, '/employees', {
      user_id: userId,
      personnel_number: '4712',
      name: 'Max Mustermann',
    });
    expect(employee.status).toBe(201);

    const contract = await post(auth, `/employees/${employee.body.id}/contracts`, {
      valid_from: '2026-01-01',
      weekly_minutes: 2400,
      working_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      vacation_days_per_year: 30,
      state: 'DE-BE',
    });
    const sheet = await post(auth, '/timesheets', {
      user_id: userId,
      date: '2026-10-05',
      entries: [{ start: '08:00', end: '12:00', category: 'normal' }],
    });
    const leave = await post(auth, '/leaves', {
      user_id: userId,
      type: 'sick',
      start_date: '2026-10-07',
      end_date: '2026-10-07',
    });

    expect([contract.status, sheet.status, leave.status]).toEqual([201, 201, 201]);
    expect(sheet.body).toMatchObject({ user_id: userId, date: '2026-10-05' });
    expect(leave.body).toMatchObject({ user_id: userId, type: 'sick' });
    expect((await get(auth, `/timesheets/${sheet.body.id}`)).status).toBe(200);
    expect((await get(auth, `/leaves/${leave.body.id}`)).status).toBe(200);
    for (const path of [
      `/employees/${employee.body.id}/contracts`,
      '/timesheets',
      `/timesheets?user_id=${userId}`,
      '/leaves',
      `/leaves?user_id=${userId}`,
    ]) {
      const list = await get(auth, path);
      expect({ path, status: list.status, items: list.body.data, total: list.body.pagination.total }).toEqual({
        path,
        status: 200,
        items: [],
        total: 0,
      });
    }
    const exported = await get(auth, '/exports/payroll?period=2026-10');
    expect(exported.status).toBe(200);
    expect(exported.text).toBe('personnel_number,name,period,wage_type,category,quantity,unit\r\n');
  },
);

test(
  'When the service runs with a replica, then its reads are connected there as the ' +
    'read-only role, and /readyz reports the replica beside the database',
  async () => {
    const { auth } = newCaller();
    expect((await get(auth, '/employees')).status).toBe(200);

    const [row] = await hr.db.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND usename = $2 AND application_name = 'hr-reads'`,
      replica.name,
      READ_REPLICA_ROLE,
    );
    expect(Number(row!.n)).toBeGreaterThan(0);
    const ready = await request(hr.app).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { database: 'ok', database_reads: 'ok' } });
  },
);
