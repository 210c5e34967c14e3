import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, bearer, createClient, newTenant, startHelpdesk } from './support/helpdesk';

let desk: TestDesk;
let http: Api;

beforeAll(async () => ({ desk, http } = await startHelpdesk()));
afterAll(() => desk.close());

/** A tenant of its own, so that a search's hits are exactly the tickets made here. */
async function searchTenant() {
  const { token } = await newTenant(desk);
  const client = await createClient(http, token);
  const open = async (title: string, description = '', client_id = client.id) =>
    (await http.post(`${BASE}/tickets`).set(bearer(token)).send({ title, description, client_id }).expect(201)).body as { id: string };
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

    await http.post(`${BASE}/tickets/${ticket.id}/comments`).set(bearer(token)).send({ body: 'Das Zertifikat des Servers ist abgelaufen.', internal: true }).expect(201);

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
    expect(all.body.pagination.total).toBe(3);
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
      expect(response.body).toMatchObject({ status: 400, type: 'urn:msp:problem:empty-search', errors: [{ field: 'q' }] });
    }
    await search('q=').expect(400);
  });

  test('When the words before the last match more than 500 tickets or few, then the search finds exactly the tickets with every word, with the exact total', async () => {
    // Two ways to the same answer (tickets.repository searchQuery's `narrow`): rare leading words
    // are found through the index and the whole query checked on their rows; common ones (over 500
    // of the tenant's tickets) are intersected with the last word's prefix in the index.
    const { open, search, ids } = await searchTenant();
    const common = [];
    for (let batch = 0; batch < 21; batch++) {
      common.push(...(await Promise.all(Array.from({ length: 25 }, (_, i) => open(`Firewall alert ${batch * 25 + i}`)))));
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
  });

  test('When another tenant has a matching ticket, then the search does not see it', async () => {
    const mine = await searchTenant();
    const theirs = await searchTenant();
    await theirs.open('Scanner kaputt');
    expect(await mine.ids('q=Scanner')).toEqual([]);
  });
});
