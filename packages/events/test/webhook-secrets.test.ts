import { randomBytes, randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { Webhook } from 'standardwebhooks';
import { createOutbound } from '@msp/outbound';
import { createSecretBox } from '@msp/secrets';
import {
  createDeliveriesRepository,
  createDispatcher,
  eventCatalogue,
  newSigningSecret,
  recordEvent,
  type Dispatcher,
} from '../src';
import { createWebhooksRepository } from '../src/webhooks/webhooks.repository';
import { createWebhooksService } from '../src/webhooks/webhooks.service';
import { eventsDatabase, quietLogger, receiver, waitUntil } from './support';

// Signing secrets at rest are sealed like link's connector tokens: a copy of the database alone
// cannot forge a delivery.
const TENANT = randomUUID();
const catalogue = eventCatalogue([
  { type: 'ticket.created', summary: 'A ticket was opened.', object: Type.Object({ id: Type.String() }) },
]);
const secrets = createSecretBox(randomBytes(32));
const outbound = createOutbound({ allowLoopback: true, timeoutMs: 2_000 });

let db: Awaited<ReturnType<typeof eventsDatabase>>;
const dispatchers: Dispatcher[] = [];
beforeAll(async () => {
  db = await eventsDatabase();
});
afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
});
afterAll(() => db.close());

async function startDispatcher(box = secrets) {
  const dispatcher = createDispatcher({
    deliveries: createDeliveriesRepository(db.sql),
    outbound,
    secrets: box,
    logger: quietLogger(),
    pollMs: 100,
    retryDelaysMs: [100],
  });
  dispatchers.push(dispatcher);
  await dispatcher.start();
}
const storedSecret = async (id: string) =>
  (await db.pool.query('SELECT secret FROM webhooks WHERE id = $1', [id])).rows[0].secret as string;
const record = (resourceId: string) =>
  recordEvent(db.sql, {
    type: 'ticket.created',
    tenantId: TENANT,
    resourceType: 'ticket',
    resourceId,
    object: { id: resourceId },
  });

test('When a webhook is subscribed, then its secret is stored encrypted, and deliveries are signed with the secret answered once', async () => {
  const endpoint = await receiver();
  try {
    const service = createWebhooksService({
      webhooks: createWebhooksRepository(db.sql),
      catalogue,
      outbound,
      secrets,
      wake: () => undefined,
    });
    const created = await service.create(TENANT, { url: endpoint.url, events: ['*'] });
    const stored = await storedSecret(created.id);
    expect(stored).toMatch(/^v1\./);
    expect(stored).not.toContain(created.secret.slice('whsec_'.length));
    expect(secrets.open(stored)).toBe(created.secret);

    await startDispatcher();
    await record(`sealed-${randomUUID()}`);
    const [received] = await endpoint.waitFor(1);
    expect(
      new Webhook(created.secret).verify(received!.body, received!.headers as Record<string, string>),
    ).toMatchObject({ type: 'ticket.created' });
  } finally {
    await endpoint.close();
  }
});

test('When a secret was stored in plain text (before encryption), then a dispatcher encrypts it at start, and its deliveries still verify', async () => {
  const endpoint = await receiver();
  try {
    const secret = newSigningSecret();
    const webhook = await createWebhooksRepository(db.sql).create(TENANT, {
      url: endpoint.url,
      events: ['*'],
      description: null,
      secret,
    });
    expect(await storedSecret(webhook.id)).toBe(secret);

    await startDispatcher();
    const stored = await storedSecret(webhook.id);
    expect(stored).not.toContain(secret.slice('whsec_'.length));
    expect(secrets.open(stored)).toBe(secret);
    await record(`legacy-${randomUUID()}`);
    const [received] = await endpoint.waitFor(1);
    expect(new Webhook(secret).verify(received!.body, received!.headers as Record<string, string>)).toMatchObject({
      type: 'ticket.created',
    });
  } finally {
    await endpoint.close();
  }
});

test('When the key is not the one a secret was sealed with, then its delivery fails saying so, and nothing is sent', async () => {
  const endpoint = await receiver();
  try {
    const webhook = await createWebhooksRepository(db.sql).create(TENANT, {
      url: endpoint.url,
      events: ['*'],
      description: null,
      secret: secrets.seal(newSigningSecret()),
    });
    await startDispatcher(createSecretBox(randomBytes(32)));
    await record(`wrong-key-${randomUUID()}`);
    const row = await waitUntil(
      async () =>
        (await db.pool.query('SELECT attempts FROM webhook_deliveries WHERE webhook_id = $1', [webhook.id])).rows[0]
          ?.attempts[0],
    );
    expect(row.error).toBe(
      'the signing secret cannot be decrypted (was WEBHOOK_ENCRYPTION_KEY changed?); nothing was sent',
    );
    expect(endpoint.received).toHaveLength(0);
  } finally {
    await endpoint.close();
  }
});
