import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutbound } from '@msp/outbound';
import { createScimClient, parseRetryAfter, ScimError, SCIM_ENTERPRISE_USER_SCHEMA } from '../src/scim/scim-client';

/**
 * The SCIM client against directories that misbehave in ways a well-kept library will not play:
 * one that sends fewer than asked, one whose totals lie, one that echoes the token. (The client
 * against a real SCIM server is in syncs.test.ts.)
 */

const TOKEN = 'very-secret-bearer-token-123';
type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;
let handler: Handler;
let server: http.Server;
let baseUrl: string;
const received: { method: string; url: string; body: string; authorization?: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, body, authorization: req.headers.authorization });
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/scim/v2`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => (received.length = 0));

const client = (timeoutMs = 2000) =>
  createScimClient({
    baseUrl,
    bearerToken: TOKEN,
    outbound: createOutbound({ allowLoopback: true, timeoutMs }),
    pageSize: 100,
  });
const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/scim+json', ...headers }).end(JSON.stringify(body));
const users = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `u${i}`, userName: `user${i}@example.com` }));

async function listAll(c = client()) {
  const seen: string[] = [];
  for await (const page of c.listUsers()) seen.push(...page.map((user) => user.id));
  return seen;
}

describe('listing', () => {
  test('When the directory sends fewer per page than asked, then the client follows totalResults with startIndex until it has all', async () => {
    const all = users(25);
    handler = (req, _body, res) => {
      const url = new URL(req.url!, 'http://x');
      const start = Number(url.searchParams.get('startIndex'));
      json(res, 200, {
        totalResults: all.length,
        itemsPerPage: 10,
        startIndex: start,
        Resources: all.slice(start - 1, start - 1 + 10),
      });
    };
    expect(await listAll()).toEqual(all.map((user) => user.id));
    expect(received.map((r) => new URL(r.url, 'http://x').searchParams.get('startIndex'))).toEqual(['1', '11', '21']);
    expect(received.every((r) => r.authorization === `Bearer ${TOKEN}` && r.url.includes('count=100'))).toBe(true);
  });

  test('When the directory sends an empty page before its totalResults, then the listing ends with an error instead of looping', async () => {
    handler = (req, _body, res) => {
      const start = Number(new URL(req.url!, 'http://x').searchParams.get('startIndex'));
      json(res, 200, { totalResults: 1000, Resources: start === 1 ? users(5) : [] });
    };
    const error = await listAll().catch((e) => e);
    expect(error).toBeInstanceOf(ScimError);
    expect(error.message).toContain('empty page');
    expect(received).toHaveLength(2);
  });

  test('When the directory repeats its first page whatever startIndex says, then the listing ends with an error', async () => {
    handler = (_req, _body, res) => json(res, 200, { totalResults: 50, Resources: users(10) });
    const error = await listAll().catch((e) => e);
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
    expect(error.message).toContain('ignores startIndex');
    expect(received).toHaveLength(2);
  });

  test('When the answer has no totalResults or is not JSON, then it is a permanent error naming base_url', async () => {
    handler = (_req, _body, res) => json(res, 200, { Resources: [] });
    expect(await listAll().catch((e) => e)).toMatchObject({ kind: 'invalid_response', retryable: false });
    handler = (_req, _body, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
    const error = await listAll().catch((e) => e);
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
    expect(error.message).toContain('base_url');
  });

  test('When the directory has nothing, then one request is made and nothing is listed', async () => {
    handler = (_req, _body, res) => json(res, 200, { totalResults: 0, Resources: [] });
    expect(await listAll()).toEqual([]);
    expect(received).toHaveLength(1);
  });
});

describe('errors', () => {
  test.each([
    [401, 'unauthorized', false, 'bearer_token'],
    [403, 'forbidden', false, 'rights'],
    [404, 'not_found', false, 'base_url'],
    [409, 'rejected', false, '409'],
    [500, 'server', true, '500'],
    [503, 'server', true, '503'],
  ])(
    'When the directory answers %i, then the error is %s (retryable %s) and says what to look at',
    async (status, kind, retryable, hint) => {
      // A directory that echoes the Authorization header into its error detail.
      handler = (req, _body, res) =>
        json(res, status, { status: String(status), detail: `denied for ${req.headers.authorization}` });
      const error = await listAll().catch((e) => e);
      expect(error).toMatchObject({ kind, retryable, status });
      expect(error.message).toContain(hint);
      expect(error.message).not.toContain(TOKEN);
      expect(error.message).toContain('Bearer [redacted]');
    },
  );

  test('When the directory answers 429 with Retry-After, then the error is retryable and carries the wait in ms', async () => {
    handler = (_req, _body, res) => json(res, 429, { detail: 'slow down' }, { 'retry-after': '7' });
    expect(await listAll().catch((e) => e)).toMatchObject({
      kind: 'rate_limited',
      retryable: true,
      retryAfterMs: 7000,
    });
    handler = (_req, _body, res) => json(res, 503, {}, { 'retry-after': new Date(Date.now() + 30_000).toUTCString() });
    const error = await listAll().catch((e) => e);
    expect(error.retryAfterMs).toBeGreaterThan(25_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  test('When the directory does not answer in time or cannot be reached, then the error is retryable', async () => {
    handler = () => undefined; // never answers
    expect(await listAll(client(200)).catch((e) => e)).toMatchObject({ kind: 'timeout', retryable: true });
    const closed = createScimClient({
      baseUrl: 'http://127.0.0.1:1/scim',
      bearerToken: TOKEN,
      outbound: createOutbound({ allowLoopback: true }),
    });
    const error = await closed.findUserByUserName('x@example.com').catch((e) => e);
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(error.message).not.toContain(TOKEN);
  });

  test('When a page is larger than 10 MB, then the sync stops with an error saying so and is not retried', async () => {
    const page = {
      totalResults: 1,
      itemsPerPage: 1,
      startIndex: 1,
      Resources: [{ id: 'u1', userName: 'x'.repeat(11 * 1024 * 1024) }],
    };
    handler = (_req, _body, res) => {
      // Streamed without Content-Length: the limit holds on what arrives, not on what is declared.
      const text = JSON.stringify(page);
      res.writeHead(200, { 'content-type': 'application/scim+json' });
      res.write(text.slice(0, 1000));
      res.end(text.slice(1000));
    };
    // A timeout well past what 11 MB over loopback takes even on a loaded machine: the limit, not the clock, must end it.
    const error = await listAll(client(60_000)).catch((e) => e);
    expect(error).toBeInstanceOf(ScimError);
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
    expect(error.message).toContain('with more than 10 MB');
  });

  test('parseRetryAfter reads seconds and HTTP dates and ignores nonsense', () => {
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('2015-10-21T07:27:00Z'))).toBe(60_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('account calls', () => {
  test('When a user is created, then the request is a SCIM User with the primary e-mail, active and the enterprise department', async () => {
    handler = (_req, _body, res) => json(res, 201, { id: 'new-id' });
    const created = await client().createUser({
      userName: 'ada@example.com',
      givenName: 'Ada',
      familyName: 'Lovelace',
      email: 'ada@example.com',
      department: 'Engineering',
    });
    expect(created).toEqual({ id: 'new-id' });
    expect(received[0]).toMatchObject({ method: 'POST', url: '/scim/v2/Users' });
    expect(JSON.parse(received[0]!.body)).toEqual({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', SCIM_ENTERPRISE_USER_SCHEMA],
      userName: 'ada@example.com',
      name: { givenName: 'Ada', familyName: 'Lovelace', formatted: 'Ada Lovelace' },
      displayName: 'Ada Lovelace',
      emails: [{ value: 'ada@example.com', type: 'work', primary: true }],
      active: true,
      [SCIM_ENTERPRISE_USER_SCHEMA]: { department: 'Engineering' },
    });
  });

  test('When a user or group is looked up, then the filter quotes the value and only an exact match counts', async () => {
    handler = (_req, _body, res) =>
      json(res, 200, { totalResults: 1, Resources: [{ id: 'g1', displayName: 'Sales "EU"' }] });
    expect(await client().findGroupByDisplayName('Sales "EU"')).toEqual({ id: 'g1' });
    expect(decodeURIComponent(new URL(received[0]!.url, 'http://x').searchParams.get('filter')!)).toBe(
      'displayName eq "Sales \\"EU\\""',
    );
    expect(await client().findGroupByDisplayName('Sales')).toBeNull();

    handler = (_req, _body, res) =>
      json(res, 200, { totalResults: 1, Resources: [{ id: 'u1', userName: 'Ada@Example.com', active: false }] });
    expect(await client().findUserByUserName('ada@example.com')).toEqual({ id: 'u1', active: false });
    handler = (_req, _body, res) => json(res, 200, { totalResults: 0, Resources: [] });
    expect(await client().findUserByUserName('nobody@example.com')).toBeNull();
  });

  test('When a member is added, a user deactivated or deleted, then the right PATCH and DELETE go out; a deleted user already gone is false', async () => {
    handler = (_req, _body, res) => res.writeHead(204).end();
    await client().addGroupMember('g1', 'u1');
    await client().deactivateUser('u1');
    expect(await client().deleteUser('u1')).toBe(true);
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual([
      'PATCH /scim/v2/Groups/g1',
      'PATCH /scim/v2/Users/u1',
      'DELETE /scim/v2/Users/u1',
    ]);
    expect(JSON.parse(received[0]!.body)).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'add', path: 'members', value: [{ value: 'u1' }] }],
    });
    expect(JSON.parse(received[1]!.body)).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', path: 'active', value: false }],
    });
    handler = (_req, _body, res) => json(res, 404, { detail: 'gone' });
    expect(await client().deleteUser('u1')).toBe(false);
  });
});
