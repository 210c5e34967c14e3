import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, bearer, createClient, newTenant, startHelpdesk } from './support/helpdesk';

let desk: TestDesk;
let http: Api;

beforeAll(async () => ({ desk, http } = await startHelpdesk()));
afterAll(() => desk.close());

/**
 * A tenant of its own, so that a search's hits are exactly the tickets made here; with `filler`,
 * that many tickets titled "Ticket <n>" first, through the tables' own triggers.
 */
async function searchTenant({ filler = 0 } = {}) {
  const { tenantId, token } = await newTenant(desk);
  const client = await createClient(http, token);
  if (filler > 0) {
    await desk.db.$executeRawUnsafe(
      `INSERT INTO tickets (tenant_id, number, title, client_id, created_at, updated_at)
       SELECT $1::uuid, g, 'Ticket ' || g, $2::uuid, now() - interval '1 day', now() FROM generate_series(1, $3::int) g`,
      tenantId,
      client.id,
      filler,
    );
    await desk.db.$executeRawUnsafe(
      `INSERT INTO ticket_sequences (tenant_id, last_number) VALUES ($1::uuid, $2::int)`,
      tenantId,
      filler,
    );
  }
  const open = async (title: string, description = '', client_id = client.id) =>
    (await http.post(`${BASE}/tickets`).set(bearer(token)).send({ title, description, client_id }).expect(201))
      .body as { id: string };
  const search = (query: string) => http.get(`${BASE}/tickets?${query}`).set(bearer(token));
  const ids = async (query: string) => {
    const response = await search(query).expect(200);
    return (response.body.data as { id: string }[]).map((ticket) => ticket.id);
  };
  return { token, client, open, search, ids };
}

describe('GET /tickets?q=', () => {
  test('When words are searched in German and English, then inflections and umlauts as typed are found, and the last word as a prefix', async () => {
    const { open, ids } = await searchTenant();
    const drucker = await open('Drucker im 2. Stock druckt nicht', 'Seit Montag.');
    const stoerung = await open('Netzwerk', 'Störung im Netzwerk seit heute früh');
    const printer = await open('Printers jam', 'The printer on floor 2 jams on every duplex print.');
    const network = await open('VPN', 'The network drops every hour.');

    expect(await ids('q=Drucker')).toEqual([drucker.id]);
    expect(await ids('q=druckern')).toEqual([drucker.id]);
    expect(await ids(`q=${encodeURIComponent('Störung')}`)).toEqual([stoerung.id]);
    expect(await ids('q=printer')).toEqual([printer.id]);
    expect(await ids('q=netw')).toEqual([network.id]);
    expect(await ids('q=network%20drops')).toEqual([network.id]);
    expect(await ids('q=printer%20drops')).toEqual([]);
  });

  test('When a word is only in a comment, an internal one too, then the search finds the ticket as soon as the comment is written', async () => {
    const { token, open, ids } = await searchTenant();
    const ticket = await open('Outlook', 'Mails stay in the outbox.');
    expect(await ids('q=Zertifikat')).toEqual([]);

    await http
      .post(`${BASE}/tickets/${ticket.id}/comments`)
      .set(bearer(token))
      .send({ body: 'Das Zertifikat des Servers ist abgelaufen.', internal: true })
      .expect(201);

    expect(await ids('q=Zertifikat')).toEqual([ticket.id]);
    expect(await ids('q=abgelaufen%20outbox')).toEqual([ticket.id]);
  });

  test('When q is combined with other filters, then both apply and total counts the matches exactly', async () => {
    const { token, open, search, ids } = await searchTenant();
    const other = await createClient(http, token);
    const first = await open('Printer jams');
    const second = await open('Printer offline');
    const elsewhere = await open('Printer toner', '', other.id);
    await open('Keyboard broken');
    await http.patch(`${BASE}/tickets/${second.id}`).set(bearer(token)).send({ status: 'in_progress' }).expect(200);

    const all = await search('q=printer').expect(200);
    expect(all.body.pagination).toEqual({ page: 1, per_page: 25, total: 3, total_pages: 1, total_exact: true });
    // A list without q has no window, so no total_exact.
    expect((await search('per_page=1').expect(200)).body.pagination).not.toHaveProperty('total_exact');
    expect(new Set(await ids('q=printer'))).toEqual(new Set([first.id, second.id, elsewhere.id]));
    expect(await ids('q=printer&status=in_progress')).toEqual([second.id]);
    expect(await ids(`q=printer&client_id=${other.id}`)).toEqual([elsewhere.id]);
    const combined = await search(`q=printer&status=open&client_id=${other.id}`).expect(200);
    expect(combined.body).toMatchObject({ pagination: { total: 1 }, data: [{ id: elsewhere.id }] });
  });

  test('When no sort is given, then the most relevant ticket comes first (title over description), and sort=sla_due_at orders instead', async () => {
    const { open, ids } = await searchTenant();
    const inTitle = await open('Firewall blocks the VPN', 'Nothing else.');
    const inDescription = await open('Remote access', 'Maybe the firewall.');
    const newest = await open('Firewall firmware', 'The firewall needs the firewall update.');

    const byRelevance = await ids('q=firewall');
    expect(byRelevance).toHaveLength(3);
    expect(byRelevance.indexOf(inTitle.id)).toBeLessThan(byRelevance.indexOf(inDescription.id));
    expect(byRelevance[0]).toBe(newest.id);
    // Without SLA clocks every ticket ties on sla_due_at: newest first.
    expect(await ids('q=firewall&sort=sla_due_at')).toEqual([newest.id, inDescription.id, inTitle.id]);
  });

  test('When q holds only stop words or punctuation, then it answers 400 with a problem', async () => {
    const { search } = await searchTenant();
    for (const q of ['der die das', '!!!', 'the and of', ' - ']) {
      const response = await search(`q=${encodeURIComponent(q)}`).expect(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({
        status: 400,
        type: 'urn:msp:problem:empty-search',
        errors: [{ field: 'q' }],
      });
    }
    await search('q=').expect(400);
  });

  test.each([
    ['more tickets than a search reads one by one', 20_001],
    ['few enough tickets for a search to read one by one', 0],
  ])(
    'When the tenant has %s, and the words before the last match more than 500 tickets or few, ' +
      'then the search finds exactly the tickets with every word, with the exact total',
    async (_size, filler) => {
      // The ways to the same answer (tickets.repository's searchQuery): rare leading words are found
      // through the index and the whole query checked on their rows (`narrow`); common ones (over 500
      // of the tenant's tickets) are checked ticket by ticket in a tenant of at most 20,000 (`walk`),
      // and intersected with the last word's prefix in the index in a larger one.
      const { open, search, ids } = await searchTenant({ filler });
      const common = [];
      for (let batch = 0; batch < 21; batch++) {
        common.push(
          ...(await Promise.all(Array.from({ length: 25 }, (_, i) => open(`Firewall alert ${batch * 25 + i}`)))),
        );
      }
      const inTitle = await open('Firewall Netzteil defekt', 'Zebra 7 im Keller.');
      const inDescription = await open('Keller', 'Das Netzteil der Firewall (Zebra 7) brummt.');
      const zebraOnly = await open('Zebra 7', 'Kein Netz.');

      // "firewall" is in 527 tickets: the common way.
      const commonWay = await search('q=firewall%20netzt').expect(200);
      expect(commonWay.body.pagination.total).toBe(2);
      expect((commonWay.body.data as { id: string }[]).map((t) => t.id)).toEqual([inTitle.id, inDescription.id]);
      // "zebra" is in 3: the narrow way, the same rules and the same relevance (here the description
      // with both words side by side ranks above the title and description with one each).
      const narrowWay = await search('q=zebra%20netzt').expect(200);
      expect(narrowWay.body.pagination.total).toBe(2);
      expect((narrowWay.body.data as { id: string }[]).map((t) => t.id)).toEqual([inDescription.id, inTitle.id]);
      expect(new Set(await ids('q=zebra%207%20netz'))).toEqual(new Set([inTitle.id, inDescription.id, zebraOnly.id]));
      expect(await ids('q=zebra%20firewall%20alert')).toEqual([]);
      // Paging the common way: the exact total, and a page from the middle.
      const page = await search('q=firewall%20alert&per_page=100&page=3').expect(200);
      expect(page.body.pagination.total).toBe(common.length);
      expect(page.body.data).toHaveLength(100);
    },
  );

  test(
    'When more tickets match than the search window, then the 1,000 newest are ranked and ' +
      'counted, total_exact is false, and a page past them is a 400',
    async () => {
      const { tenantId, token } = await newTenant(desk);
      const client = await createClient(http, token);
      // 1,004 matches through the tables' own triggers (search vector, counters): 'Drucker <n>', one
      // a second apart, and the oldest, a day older still, with the word three times in its title.
      await desk.db.$executeRawUnsafe(
        `INSERT INTO tickets (tenant_id, number, title, client_id, created_at, updated_at)
       SELECT $1::uuid, g, CASE WHEN g = 1 THEN 'Drucker Drucker Drucker' ELSE 'Drucker ' || g END, $2::uuid,
              now() - make_interval(secs => 2000 - g) - CASE WHEN g = 1 THEN interval '1 day' ELSE interval '0' END, now()
         FROM generate_series(1, 1004) g`,
        tenantId,
        client.id,
      );
      await desk.db.$executeRawUnsafe(
        `INSERT INTO ticket_sequences (tenant_id, last_number) VALUES ($1::uuid, 1004)`,
        tenantId,
      );
      const newest = (
        await desk.db.$queryRawUnsafe<{ id: string }[]>(
          `SELECT id::text FROM tickets WHERE tenant_id = $1::uuid ORDER BY created_at DESC, id DESC LIMIT 1000`,
          tenantId,
        )
      ).map((row) => row.id);
      const oldest = (
        await desk.db.$queryRawUnsafe<{ id: string }[]>(
          `SELECT id::text FROM tickets WHERE tenant_id = $1::uuid AND number = 1`,
          tenantId,
        )
      )[0]!.id;
      const search = (query: string) => http.get(`${BASE}/tickets?${query}`).set(bearer(token));

      const first = await search('q=Drucker&per_page=100').expect(200);
      expect(first.body.pagination).toEqual({
        page: 1,
        per_page: 100,
        total: 1000,
        total_pages: 10,
        total_exact: false,
      });
      expect(first.headers.link).toContain('q=Drucker&per_page=100&page=10>; rel="last"');
      const seen: string[] = [];
      for (let page = 1; page <= 10; page++) {
        const response = await search(`q=Drucker&per_page=100&page=${page}`).expect(200);
        expect(response.body.pagination).toMatchObject({ total: 1000, total_exact: false });
        seen.push(...(response.body.data as { id: string }[]).map((ticket) => ticket.id));
      }
      // The window is the 1,000 newest, each on one page, equally relevant so newest first; the
      // oldest, the most relevant of all, is outside it.
      expect(seen).toEqual(newest);
      expect(seen).not.toContain(oldest);

      // A filter that leaves fewer matches than the window: exact again, and the most relevant first.
      await desk.db.$executeRawUnsafe(
        `UPDATE tickets SET priority = 'urgent' WHERE tenant_id = $1::uuid AND number IN (1, 500, 1004)`,
        tenantId,
      );
      const narrowed = await search('q=Drucker&priority=urgent').expect(200);
      expect(narrowed.body.pagination).toEqual({ page: 1, per_page: 25, total: 3, total_pages: 1, total_exact: true });
      expect((narrowed.body.data as { id: string }[]).map((ticket) => ticket.id)).toEqual([
        oldest,
        expect.any(String),
        expect.any(String),
      ]);

      // sort=sla_due_at sorts the same window (none of these tickets has clocks: newest first), whether
      // the window was found by walking the newest tickets (a common word) or through the GIN index
      // (few matches among the newest: the urgent three).
      const sorted = await search('q=Drucker&sort=sla_due_at&per_page=100&page=10').expect(200);
      expect(sorted.body.pagination).toMatchObject({ total: 1000, total_exact: false });
      expect((sorted.body.data as { id: string }[]).map((ticket) => ticket.id)).toEqual(newest.slice(900));
      const urgent = await search('q=Drucker&priority=urgent&sort=sla_due_at').expect(200);
      expect((urgent.body.data as { id: string }[]).map((ticket) => ticket.id)).toEqual(
        [...(narrowed.body.data as { id: string }[])]
          .map((ticket) => ticket.id)
          .filter((id) => id !== oldest)
          .concat(oldest),
      );

      // Pages end with the window: the last one is there, the one after it is a 400 naming `page`
      // while more tickets match; with fewer matches than the window, a page past them is empty.
      expect((await search('q=Drucker&page=40').expect(200)).body.data).toHaveLength(25);
      for (const query of ['q=nothingmatches&page=41', 'q=Drucker&priority=urgent&page=41']) {
        expect((await search(query).expect(200)).body).toMatchObject({ data: [], pagination: { total_exact: true } });
      }
      for (const query of ['q=Drucker&page=41', 'q=Drucker&per_page=100&page=11']) {
        const refused = await search(query).expect(400);
        expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(refused.body.errors).toEqual([
          { field: 'page', message: expect.stringContaining('1,000 newest matches') },
        ]);
      }
    },
  );

  test('When another tenant has a matching ticket, then the search does not see it', async () => {
    const mine = await searchTenant();
    const theirs = await searchTenant();
    await theirs.open('Scanner kaputt');
    expect(await mine.ids('q=Scanner')).toEqual([]);
  });
});

describe('long threads and the search vector', () => {
  /** A comment body of `length` characters of words no other comment has (what makes a tsvector large). */
  const distinctWords = (length: number) => {
    let text = '';
    while (text.length < length) text += `${Math.random().toString(36).slice(2, 9)} `;
    return text.slice(0, length);
  };
  const comment = (token: string, ticketId: string, body: string) =>
    http.post(`${BASE}/tickets/${ticketId}/comments`).set(bearer(token)).send({ body, internal: false });

  test(
    'When a ticket takes 90 comments of 10,000 characters, then every comment and a change of ' +
      'title are accepted, and the title and the newest comments are still found',
    async () => {
      const { token, open, ids } = await searchTenant();
      const ticket = await open('Archiv der Telefonanlage', 'Gespräche werden nicht gespeichert.');
      for (let i = 0; i < 90; i++) {
        const response = await comment(token, ticket.id, distinctWords(10_000));
        expect(response.status).toBe(201);
      }
      await comment(token, ticket.id, 'Endlich: die Aufzeichnung läuft wieder.').expect(201);
      await http
        .patch(`${BASE}/tickets/${ticket.id}`)
        .set(bearer(token))
        .send({ title: 'Archiv der Telefonanlage (erledigt)' })
        .expect(200);

      expect(await ids('q=Telefonanlage')).toEqual([ticket.id]);
      expect(await ids('q=Aufzeichnung')).toEqual([ticket.id]);
      expect(await ids('q=gespeichert')).toEqual([ticket.id]);
    },
    120_000,
  );

  test('When two long threads are merged, then the merge is accepted and the merged ticket is found by the newest comment', async () => {
    const { token, open, ids } = await searchTenant();
    const target = await open('Mailserver', 'Postfächer laufen voll.');
    const source = await open('Mailserver 2', 'Auch hier.');
    for (let i = 0; i < 45; i++) {
      await comment(token, target.id, distinctWords(10_000)).expect(201);
      await comment(token, source.id, distinctWords(10_000)).expect(201);
    }
    await comment(token, source.id, 'Quota auf Exchange erhöht.').expect(201);

    await http
      .post(`${BASE}/tickets/${target.id}/merge`)
      .set(bearer(token))
      .send({ source_ids: [source.id] })
      .expect(200);

    expect(await ids('q=Quota')).toEqual([target.id]);
    expect(await ids('q=Postfächer')).toEqual([target.id]);
  }, 120_000);

  test(
    "When a ticket's comments stay short, then its search vector is exactly the " +
      'document of its title, description and every comment, as before',
    async () => {
      const { token, open } = await searchTenant();
      const ticket = await open('VPN bricht ab', 'Seit dem Update.');
      for (const body of ['Client neu installiert.', 'Zertifikat erneuert; the tunnel holds now.', 'Kunde bestätigt.'])
        await comment(token, ticket.id, body).expect(201);
      const [row] = await desk.db.$queryRaw<{ same: boolean }[]>`
      SELECT search_vector = ticket_search_document(title, description,
        (SELECT string_agg(body, E'\n' ORDER BY created_at, id) FROM ticket_comments WHERE ticket_id = tickets.id)) AS same
        FROM tickets WHERE id = ${ticket.id}::uuid`;
      expect(row!.same).toBe(true);
    },
  );
});
