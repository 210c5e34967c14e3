import { randomBytes, randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { PassThrough } from 'node:stream';
import { createLogger, isAppError } from '@msp/http';
import { createOutbound } from '@msp/outbound';
import { createSecretBox } from '@msp/secrets';
import { createDeliveriesRepository, createDispatcher, eventCatalogue, newSigningSecret, recordEvent } from '../src';
import { createWebhooksRepository } from '../src/webhooks/webhooks.repository';
import { createWebhooksService } from '../src/webhooks/webhooks.service';
import { eventsDatabase, receiver, waitUntil } from './support';

// Webhook URLs are chosen by callers: in every mode they may not reach the service's own network
// (the same policy as link's connectors), and the signing secret never reaches a log line.
const TENANT = randomUUID();
const secrets = createSecretBox(randomBytes(32));
const catalogue = eventCatalogue([
  { type: 'ticket.created', summary: 'A ticket was opened.', object: Type.Object({ id: Type.String() }) },
]);

let db: Awaited<ReturnType<typeof eventsDatabase>>;
beforeAll(async () => {
  db = await eventsDatabase();
});
afterAll(() => db.close());

function service(allowlist: string[] = []) {
  const outbound = createOutbound({
    allowlist,
    lookup: async (host) => (host === 'inside.example.com' ? ['10.1.2.3'] : ['93.184.215.14']),
  });
  return createWebhooksService({
    webhooks: createWebhooksRepository(db.sql),
    catalogue,
    outbound,
    secrets,
    wake: () => undefined,
  });
}

async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

test.each([
  ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data', /link-local address \(cloud metadata\)/],
  ['a loopback address', 'http://127.0.0.1:8080/hook', /loopback/],
  ['a private address', 'https://10.0.0.5/hook', /private address/],
  ['an IPv6 loopback', 'http://[::1]/hook', /loopback/],
  ['a name that resolves inside', 'https://inside.example.com/hook', /resolved to 10\.1\.2\.3, a private address/],
])('a webhook to %s is a 422 naming url, and nothing is stored', async (_case, url, reason) => {
  const before = (await db.pool.query('SELECT count(*)::int AS n FROM webhooks')).rows[0].n;
  const error = await refusal(service().create(TENANT, { url, events: ['*'] }));
  expect(error.status).toBe(422);
  expect(error.errors?.[0]).toMatchObject({ field: 'url', message: expect.stringMatching(reason) });
  expect((await db.pool.query('SELECT count(*)::int AS n FROM webhooks')).rows[0].n).toBe(before);
});

test('an address OUTBOUND_ALLOWLIST names is allowed, and public names are', async () => {
  await expect(
    service(['10.0.0.0/8']).create(TENANT, { url: 'https://inside.example.com/hook', events: ['*'] }),
  ).resolves.toMatchObject({ secret: expect.stringMatching(/^whsec_/) });
  await expect(
    service().create(TENANT, { url: 'https://hooks.example.com/hook', events: ['*'] }),
  ).resolves.toMatchObject({ enabled: true });
});

test('a delivery to an address that became internal is refused at sending time, and no log line holds the secret', async () => {
  const endpoint = await receiver();
  const log = new PassThrough();
  let logged = '';
  log.on('data', (chunk: Buffer) => (logged += chunk.toString()));
  const secret = newSigningSecret();
  // Stored directly, as if the name had pointed outside when it was subscribed.
  const webhook = await createWebhooksRepository(db.sql).create(TENANT, {
    url: endpoint.url,
    events: ['*'],
    description: null,
    secret,
  });
  await db.pool.query("UPDATE webhooks SET failing_since = now() - interval '4 days' WHERE id = $1", [webhook.id]);
  const dispatcher = createDispatcher({
    deliveries: createDeliveriesRepository(db.sql),
    outbound: createOutbound({ timeoutMs: 1_000 }),
    secrets,
    logger: createLogger({ service: 'events-test', level: 'debug', stream: log }),
    pollMs: 100,
    retryDelaysMs: [100],
  });
  await dispatcher.start();
  try {
    await recordEvent(db.sql, {
      type: 'ticket.created',
      tenantId: TENANT,
      resourceType: 'ticket',
      resourceId: 't-1',
      object: { id: 't-1' },
    });
    const row = await waitUntil(async () => {
      const { rows } = await db.pool.query('SELECT status, attempts FROM webhook_deliveries WHERE webhook_id = $1', [
        webhook.id,
      ]);
      return rows[0]?.attempts.length >= 1 ? rows[0] : undefined;
    });
    expect(row.attempts[0].error).toMatch(/^refused: 127\.0\.0\.1:\d+ is a loopback address/);
    await waitUntil(
      async () =>
        (await db.pool.query('SELECT enabled FROM webhooks WHERE id = $1', [webhook.id])).rows[0].enabled === false,
    );
  } finally {
    await dispatcher.stop();
    await endpoint.close();
  }
  expect(endpoint.received).toHaveLength(0);
  expect(logged).toContain('webhook disabled after failing');
  expect(logged).not.toContain(secret);
  expect(logged).not.toContain(secret.slice('whsec_'.length));
});
