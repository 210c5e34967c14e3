import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@msp/http';
import { createDeskClient, DeskError, type DeskClient } from '../src/desk/desk-client';
import { startRealDesk, type DeskTenant, type RealDesk } from './support/desk';

const logger = createLogger({ service: 'link', level: 'error' });

let desk: RealDesk;
let tenant: DeskTenant;
let client: DeskClient;

beforeAll(async () => {
  desk = await startRealDesk();
  tenant = await desk.newTenant();
  client = createDeskClient(
    { apiUrl: desk.apiUrl, clientId: desk.service.clientId, clientSecret: desk.service.clientSecret, timeoutMs: 2000 },
    logger,
  );
});
afterAll(() => desk.close());

/** The refresh tokens desk issued to link's service client for a tenant: one per token request. */
const tokenRequests = async (tenantId: string) =>
  (
    await desk.db.db
      .selectFrom('refresh_tokens as r')
      .innerJoin('api_clients as c', 'c.id', 'r.api_client_id')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('r.tenant_id', '=', tenantId)
      .where('c.client_id', '=', desk.service.clientId)
      .executeTakeFirstOrThrow()
  ).count;

async function expectDeskError(promise: Promise<unknown>, retryable: boolean, message: RegExp) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DeskError);
  expect((error as DeskError).retryable).toBe(retryable);
  expect((error as DeskError).message).toMatch(message);
}

describe('link → desk with its own service credential', () => {
  test('When link reads a user, then it asks desk for a token of that tenant once and reuses it', async () => {
    const user = await tenant.createUser();
    const other = await tenant.createUser();
    expect(await client.getUser(tenant.tenantId, user.id)).toMatchObject({
      id: user.id,
      email: user.email,
      active: true,
    });
    expect(await client.getUser(tenant.tenantId, other.id)).toMatchObject({ id: other.id, active: true });
    expect(await tokenRequests(tenant.tenantId)).toBe(1);
  });

  test('When a user is unknown, or belongs to another tenant, then getUser answers null', async () => {
    const otherTenant = await desk.newTenant();
    const theirs = await otherTenant.createUser();
    expect(await client.getUser(tenant.tenantId, theirs.id)).toBeNull();
    expect(await client.getUser(tenant.tenantId, '00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  test('When the cached token is about to expire, then a new one is fetched before the call', async () => {
    const fresh = await desk.newTenant();
    const user = await fresh.createUser();
    // A margin longer than the token's hour: every cached token already counts as expiring.
    const eager = createDeskClient(
      {
        apiUrl: desk.apiUrl,
        clientId: desk.service.clientId,
        clientSecret: desk.service.clientSecret,
        refreshMarginMs: 3_700_000,
      },
      logger,
    );
    await eager.getUser(fresh.tenantId, user.id);
    await eager.getUser(fresh.tenantId, user.id);
    expect(await tokenRequests(fresh.tenantId)).toBe(2);
  });

  test('When tickets are created, listed by assignee and status, and reassigned, then desk holds exactly that', async () => {
    const from = await tenant.createUser();
    const to = await tenant.createUser();
    const company = await tenant.createClient();
    const created = await client.createTicket(tenant.tenantId, {
      title: 'Laptop for Ada',
      description: 'ThinkPad',
      category: 'hardware',
      client_id: company.id,
    });
    expect(created).toMatchObject({ number: expect.any(Number), category: 'hardware', status: 'open' });
    const mine = await tenant.createTicket({ client_id: company.id, assignee_id: from.id });

    const listed = await client.listTickets(tenant.tenantId, { assigneeId: from.id, status: 'open' });
    expect(listed.map((t) => t.id)).toEqual([mine.id]);
    const moved = await client.updateTicket(tenant.tenantId, mine.id, { assignee_id: to.id });
    expect(moved.assignee_id).toBe(to.id);
    expect((await tenant.call('GET', `/tickets/${mine.id}`)).body.assignee_id).toBe(to.id);
  });

  test('When desk refuses a call (4xx), then the error is permanent and says what desk said', async () => {
    await expectDeskError(
      client.createTicket(tenant.tenantId, {
        title: 'x',
        description: '',
        category: 'hardware',
        client_id: '00000000-0000-4000-8000-000000000000',
      }),
      false,
      /^desk refused POST \/tickets \(422\): .*client_id/,
    );
  });

  test('When link deactivates a user, then desk has them inactive; a second time, or an unknown user, answers false', async () => {
    const user = await tenant.createUser();
    expect(await client.deactivateUser(tenant.tenantId, user.id)).toBe(true);
    expect((await tenant.call('GET', `/users/${user.id}`)).body.active).toBe(false);
    expect(await client.deactivateUser(tenant.tenantId, user.id)).toBe(false);
    expect(await client.deactivateUser(tenant.tenantId, '00000000-0000-4000-8000-000000000000')).toBe(false);
  });

  test(
    "When link's service client lacks admin:tenant, then deactivating a user fails " +
      'permanently naming the scope to grant, and the user stays active',
    async () => {
      const narrow = await desk.serviceClient(['read:users', 'read:tickets', 'write:tickets']);
      const limited = createDeskClient(
        { apiUrl: desk.apiUrl, clientId: narrow.clientId, clientSecret: narrow.clientSecret },
        logger,
      );
      const user = await tenant.createUser();
      await expectDeskError(
        limited.deactivateUser(tenant.tenantId, user.id),
        false,
        /^desk refused DELETE \/users\/\S+ \(403\): .*grant link's service client the scope admin:tenant in desk's SERVICE_CLIENTS$/,
      );
      expect((await tenant.call('GET', `/users/${user.id}`)).body.active).toBe(true);
    },
  );

  test('When link has no credential, or a wrong one, then every call fails permanently naming the setting', async () => {
    const none = createDeskClient({ apiUrl: desk.apiUrl }, logger);
    expect(none.configured).toBe(false);
    await expectDeskError(
      none.getUser(tenant.tenantId, '00000000-0000-4000-8000-000000000000'),
      false,
      /DESK_CLIENT_ID and DESK_CLIENT_SECRET/,
    );
    const wrong = createDeskClient(
      { apiUrl: desk.apiUrl, clientId: desk.service.clientId, clientSecret: 'not-the-secret-at-all' },
      logger,
    );
    await expectDeskError(
      wrong.getUser(tenant.tenantId, '00000000-0000-4000-8000-000000000000'),
      false,
      /token endpoint answered 401/,
    );
  });

  test('When desk is down, answers 5xx, or does not answer in time, then the error is retryable', async () => {
    await desk.suspend();
    try {
      const fresh = createDeskClient(
        { apiUrl: desk.apiUrl, clientId: desk.service.clientId, clientSecret: desk.service.clientSecret },
        logger,
      );
      await expectDeskError(
        fresh.getUser(tenant.tenantId, '00000000-0000-4000-8000-000000000000'),
        true,
        /^desk is unreachable/,
      );
    } finally {
      await desk.resume();
    }

    const failing = http.createServer((req, res) => {
      if (req.url === '/api/v1/auth/token')
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"access_token":"t","expires_in":3600}');
      else if (req.url?.startsWith('/api/v1/users/'))
        res.writeHead(503, { 'Content-Type': 'application/problem+json' }).end('{"detail":"maintenance"}');
      // Anything else never answers.
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/api/v1`;
    try {
      const flaky = createDeskClient(
        { apiUrl: base, clientId: 'link', clientSecret: 'secret-secret-secret', timeoutMs: 300 },
        logger,
      );
      await expectDeskError(
        flaky.getUser(tenant.tenantId, 'u1'),
        true,
        /^desk answered 503 to GET \/users\/u1: maintenance/,
      );
      await expectDeskError(
        flaky.listTickets(tenant.tenantId, { assigneeId: 'u1', status: 'open' }),
        true,
        /^desk is no answer within 300 ms/,
      );
    } finally {
      failing.closeAllConnections();
      await new Promise<void>((resolve) => failing.close(() => resolve()));
    }
  });
});
