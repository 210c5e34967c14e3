import { randomBytes, randomUUID } from 'node:crypto';
import {
  clientCredentials,
  createDeskClient,
  createHrClient,
  createLinkClient,
  isProblem,
  nextPage,
  pages,
  ProblemError,
  requestToken,
  type PageCursor,
  type Problem,
} from '../src';
import { startStack } from '../scripts/stack';

// An integrator's day against desk, link and hr as they ship (their built dist/, started as
// `pnpm start` does), with the development client that holds every scope: a token from desk,
// then per service a resource created, its list read page by page, and a refusal read as a
// problem document. Every call goes through the SDK only.
let stack: Awaited<ReturnType<typeof startStack>>;
let token: () => Promise<string>;
const unique = () => randomBytes(4).toString('hex');

beforeAll(async () => {
  stack = await startStack();
  token = clientCredentials({
    deskUrl: stack.baseUrls.desk,
    clientId: stack.devClient.client_id,
    clientSecret: stack.devClient.client_secret,
  });
}, 120_000);
afterAll(() => stack?.stop(), 30_000);

/** Every item of a list through `pages`, and the cursors it followed. */
async function readAll<T>(fetchPage: Parameters<typeof pages<{ data: T[] }, unknown>>[0]) {
  const items: T[] = [];
  const cursors: (PageCursor | undefined)[] = [];
  for await (const page of pages((next) => (cursors.push(next), fetchPage(next)))) items.push(...page.data);
  return { items, cursors };
}

describe('Tokens', () => {
  test('When the client-credentials grant is asked of desk, then it answers a bearer token, and the token source keeps one', async () => {
    const issued = await requestToken({
      deskUrl: stack.baseUrls.desk,
      clientId: stack.devClient.client_id,
      clientSecret: stack.devClient.client_secret,
      scope: ['read:tickets', 'write:tickets'],
    });

    expect(issued).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read:tickets write:tickets' });
    expect(issued.access_token.split('.')).toHaveLength(3);
    const [first, second] = await Promise.all([token(), token()]);
    expect(second).toBe(first);
    expect(await token()).toBe(first);
  });

  test("When the secret is wrong, then the grant throws a ProblemError carrying OAuth's invalid_client", async () => {
    const refused = await requestToken({
      deskUrl: stack.baseUrls.desk,
      clientId: stack.devClient.client_id,
      clientSecret: 'not-the-secret',
    }).catch((error) => error);

    expect(refused).toBeInstanceOf(ProblemError);
    expect(refused.status).toBe(401);
    expect(refused.problem).toMatchObject({
      status: 401,
      type: 'urn:msp:problem:oauth-invalid-client',
      error: 'invalid_client',
    });
  });
});

describe('desk', () => {
  test('When tickets are created for a new client, then its list, read page by page, holds each once, newest first', async () => {
    const desk = createDeskClient({ baseUrl: stack.baseUrls.desk, token });
    const client = await desk.POST('/clients', { body: { name: `Contoso ${unique()}` } });
    expect(client.response.status).toBe(201);
    const clientId = client.data!.id;
    const created: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) {
      const { data, response } = await desk.POST('/tickets', {
        body: { title: `Printer jams (${n})`, client_id: clientId, priority: 'high' },
      });
      expect([response.status, response.headers.get('location')]).toEqual([
        201,
        expect.stringMatching(new RegExp(`/tickets/${data!.id}$`)),
      ]);
      created.push(data!.id);
    }

    const { items, cursors } = await readAll((next) =>
      desk.GET('/tickets', { params: { query: { client_id: clientId, per_page: 2, ...next } } }),
    );

    expect(items.map((ticket) => ticket.id)).toEqual([...created].reverse());
    expect(items.every((ticket) => ticket.client_id === clientId && ticket.status === 'open')).toBe(true);
    expect(cursors).toEqual([undefined, { page: 2 }, { page: 3 }]);
  });

  test("When a keyset page is asked (`after`), then the Link header's next pages on by keyset to the end", async () => {
    const desk = createDeskClient({ baseUrl: stack.baseUrls.desk, token });
    const client = await desk.POST('/clients', { body: { name: `Fabrikam ${unique()}` } });
    const created: string[] = [];
    for (const n of [1, 2, 3, 4, 5])
      created.push(
        (await desk.POST('/tickets', { body: { title: `VPN down (${n})`, client_id: client.data!.id } })).data!.id,
      );
    const newest = created[4]!;

    // The first page starts after the newest ticket; every next one comes from the Link header.
    const start = { after: newest };
    const { items, cursors } = await readAll((next) =>
      desk.GET('/tickets', { params: { query: { client_id: client.data!.id, per_page: 2, ...(next ?? start) } } }),
    );

    expect(items.map((ticket) => ticket.id)).toEqual([created[3], created[2], created[1], created[0]]);
    expect(cursors).toEqual([undefined, { after: created[2] }, { after: created[0] }]);
  });

  test('When a ticket breaks the schema or names no ticket, then the answer is a problem document typed by the operation', async () => {
    const desk = createDeskClient({ baseUrl: stack.baseUrls.desk, token });

    const invalid = await desk.POST('/tickets', { body: { title: '', client_id: randomUUID() } });
    const missing = await desk.GET('/tickets/{id}', { params: { path: { id: randomUUID() } } });

    expect(invalid.data).toBeUndefined();
    const problem: Problem | undefined = invalid.error;
    expect(problem).toMatchObject({
      status: 400,
      type: 'urn:msp:problem:validation-error',
      errors: [{ field: 'title' }],
    });
    expect(problem?.request_id).toBe(invalid.response.headers.get('x-request-id'));
    expect(invalid.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect([missing.response.status, missing.error?.type, isProblem(missing.error)]).toEqual([
      404,
      'urn:msp:problem:not-found',
      true,
    ]);
  });
});

describe('link', () => {
  test('When managed tenants are registered, then their list, read page by page, holds each once; a domain registered again is a 409', async () => {
    const link = createLinkClient({ baseUrl: stack.baseUrls.link, token });
    const clientId = randomUUID();
    const domains = [1, 2, 3].map((n) => `t${n}-${unique()}.onmicrosoft.com`);
    const created: string[] = [];
    for (const domain of domains) {
      const { data, response } = await link.POST('/tenants', {
        body: { name: `Tenant ${domain}`, domain, client_id: clientId },
      });
      expect(response.status).toBe(201);
      created.push(data!.id);
    }

    const { items, cursors } = await readAll((next) =>
      link.GET('/tenants', { params: { query: { client_id: clientId, per_page: 2, ...next } } }),
    );
    const again = await link.POST('/tenants', {
      body: { name: 'Again', domain: domains[0]!.toUpperCase(), client_id: clientId },
    });

    expect(items.map((tenant) => tenant.domain)).toEqual([...domains].reverse());
    expect(cursors).toEqual([undefined, { page: 2 }]);
    expect(again.data).toBeUndefined();
    expect(again.error).toMatchObject({ status: 409, type: expect.stringMatching(/^urn:msp:problem:/) });
  });
});

describe('hr', () => {
  test('When employees are created, then their list, read page by page, holds each once, and a reused personnel number is a 409 naming the field', async () => {
    const hr = createHrClient({ baseUrl: stack.baseUrls.hr, token });
    const numbers = [1, 2, 3].map(() => String(Math.floor(Math.random() * 1e12)).padStart(12, '7'));
    const created: string[] = [];
    for (const [n, personnelNumber] of numbers.entries()) {
      const body = { user_id: randomUUID(), personnel_number: personnelNumber, name: `Erika Mustermann ${n}` };
      const { data, response } = await hr.POST('/employees', { body });
      expect(response.status).toBe(201);
      created.push(data!.id);
    }

    const { items } = await readAll((next) => hr.GET('/employees', { params: { query: { per_page: 2, ...next } } }));
    const reused = await hr.POST('/employees', {
      body: { user_id: randomUUID(), personnel_number: numbers[0]!, name: 'Max Mustermann' },
    });

    expect(
      items.filter((employee) => created.includes(employee.id)).map((employee) => employee.personnel_number),
    ).toEqual([...numbers].reverse());
    expect(new Set(items.map((employee) => employee.id)).size).toBe(items.length);
    expect(reused.error).toMatchObject({ status: 409, errors: [{ field: 'personnel_number' }] });
  });

  test('When a page is refused, then pages throws its problem', async () => {
    const hr = createHrClient({ baseUrl: stack.baseUrls.hr, token: 'not-a-token' });

    const failed = await readAll((next) => hr.GET('/employees', { params: { query: { per_page: 2, ...next } } })).catch(
      (error) => error,
    );

    expect(failed).toBeInstanceOf(ProblemError);
    expect(failed.problem).toMatchObject({ status: 401, type: expect.stringMatching(/^urn:msp:problem:/) });
  });
});

test('When a Link header has no next, or only a page number, then nextPage says so', () => {
  const answer = (link?: string) => new Response(null, link ? { headers: { link } } : {});
  expect(nextPage(answer())).toBeUndefined();
  expect(
    nextPage(answer('<http://x/api/v1/tickets?page=1>; rel="first", <http://x/api/v1/tickets?page=1>; rel="last"')),
  ).toBeUndefined();
  expect(
    nextPage(
      answer('<http://x/api/v1/tickets?page=1>; rel="first", <http://x/api/v1/tickets?per_page=2&page=3>; rel="next"'),
    ),
  ).toEqual({ page: 3 });
  expect(
    nextPage(answer('<http://x/api/v1/tickets?per_page=2&after=7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70>; rel="next"')),
  ).toEqual({
    after: '7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70',
  });
});
