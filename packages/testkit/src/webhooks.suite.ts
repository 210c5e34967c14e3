import type http from 'node:http';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { createLogger, type Logger } from '@msp/http';
import type { Outbound } from '@msp/outbound';
import type { SecretBox } from '@msp/secrets';
import { testOutbound } from './test-outbound';
import { testWebhookSecrets } from './test-webhook-secrets';
import { startWebhookReceiver } from './webhook-receiver';

/*
 * Webhooks and the audit log of a service, through its HTTP API: what
 * every service does alike, run by each against its own events. Deliveries go to real HTTP
 * receivers and are verified with the `standardwebhooks` package, as an integrator's would be.
 */

/** A change made through the API, and the event it must produce. */
export interface WebhookTrigger {
  type: string;
  resourceType: string;
  resourceId: string;
  /** The answer of the write: its X-Request-Id must be the event's request id. */
  response: request.Response;
}

export interface WebhooksSetup {
  app: http.RequestListener;
  /** A token of the tenant with `admin:tenant`: its client id is `adminClientId`. */
  adminAuth: string;
  adminClientId: string;
  /** A token of the same tenant without `admin:tenant`. */
  readerAuth: string;
  /** Makes one change in the tenant through the API (each call a new resource). */
  trigger(): Promise<WebhookTrigger>;
  /** The service's database, and its Prisma client factory: each dispatcher gets a client of its own. */
  databaseUrl: string;
  createDb(databaseUrl: string): { $disconnect(): Promise<void> };
  close(): Promise<void>;
}

/** @msp/events' createServiceDispatcher (testkit does not depend on @msp/events: it tests with testkit). */
export type DispatcherFactory = (options: {
  db: never;
  logger: Logger;
  outbound: Outbound;
  secrets: SecretBox;
  pollMs: number;
  retryDelaysMs: number[];
}) => { start(): Promise<void>; stop(): Promise<void> };

const API = '/api/v1';

/** The operations @msp/events adds to every service's OpenAPI document, as `METHOD path operationId`. */
export const EVENT_OPERATIONS = [
  'POST /webhooks createWebhook',
  'GET /webhooks listWebhooks',
  'GET /webhooks/{id} getWebhook',
  'PATCH /webhooks/{id} updateWebhook',
  'DELETE /webhooks/{id} deleteWebhook',
  'POST /webhooks/{id}/test testWebhook',
  'GET /webhooks/{id}/deliveries listWebhookDeliveries',
  'GET /webhooks/{id}/deliveries/{delivery_id} getWebhookDelivery',
  'POST /webhooks/{id}/deliveries/{delivery_id}/retry retryWebhookDelivery',
  'POST /webhooks/{id}/recover recoverWebhook',
  'GET /audit-events listAuditEvents',
];

/**
 * `events`: every event type the service emits; the first one is what `trigger()` produces.
 */
export function describeWebhooks(options: {
  service: string;
  events: string[];
  createServiceDispatcher: DispatcherFactory;
  setup(): Promise<WebhooksSetup>;
}) {
  describe(`${options.service}: webhooks and the audit log`, () => {
    let setup: WebhooksSetup;
    const cleanups: (() => Promise<void>)[] = [];

    beforeAll(async () => {
      setup = await options.setup();
    }, 120_000);
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    afterAll(() => setup?.close());

    const as = (auth: string) => ({
      get: (path: string) => request(setup.app).get(`${API}${path}`).set('Authorization', auth),
      post: (path: string, body?: object) =>
        request(setup.app).post(`${API}${path}`).set('Authorization', auth).send(body),
      patch: (path: string, body: object) =>
        request(setup.app).patch(`${API}${path}`).set('Authorization', auth).send(body),
      delete: (path: string) => request(setup.app).delete(`${API}${path}`).set('Authorization', auth),
    });
    const admin = () => as(setup.adminAuth);

    async function receiver(answer?: Parameters<typeof startWebhookReceiver>[0]) {
      const started = await startWebhookReceiver(answer);
      cleanups.push(started.close);
      return started;
    }
    /**
     * A fresh instance's dispatcher on the service's database, as a new process would start it
     * (retries after 200 ms each); `stop()` ends it as a shutdown does.
     */
    async function startDispatcher() {
      const db = setup.createDb(setup.databaseUrl);
      const dispatcher = options.createServiceDispatcher({
        db: db as never,
        logger: createLogger({ service: options.service, level: 'error' }),
        outbound: testOutbound({ timeoutMs: 2_000 }),
        secrets: testWebhookSecrets(),
        pollMs: 100,
        retryDelaysMs: [200, 200, 200, 200, 200],
      });
      await dispatcher.start();
      return {
        async stop() {
          await dispatcher.stop();
          await db.$disconnect();
        },
      };
    }
    async function dispatcher() {
      const started = await startDispatcher();
      cleanups.push(started.stop);
      return started;
    }
    async function subscribe(url: string, events: string[] = ['*']) {
      const created = await admin().post('/webhooks', { url, events, description: 'test' });
      expect(created.status).toBe(201);
      cleanups.push(async () => void (await admin().delete(`/webhooks/${created.body.id}`)));
      return created.body as { id: string; secret: string };
    }
    const verify = (secret: string, received: { body: string; headers: http.IncomingHttpHeaders }) =>
      new Webhook(secret).verify(received.body, received.headers as Record<string, string>) as {
        type: string;
        timestamp: string;
        data: Record<string, unknown>;
      };
    async function deliveries(webhookId: string, until: (items: { status: string }[]) => boolean) {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const listed = await admin().get(`/webhooks/${webhookId}/deliveries`);
        expect(listed.status).toBe(200);
        if (until(listed.body.data)) return listed.body.data as Record<string, unknown>[];
        if (Date.now() > deadline) throw new Error(`deliveries never got there: ${JSON.stringify(listed.body.data)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    test(
      "the OpenAPI document describes every event's payload (OpenAPI 3.1 webhooks) " +
        'with the signature headers, and the webhook and audit routes',
      async () => {
        const document = (await request(setup.app).get(`${API}/openapi.json`)).body as {
          webhooks: Record<
            string,
            {
              post: {
                requestBody: { content: Record<string, { schema: { $ref: string } }> };
                parameters: { name: string }[];
              };
            }
          >;
          components: { schemas: Record<string, { properties: Record<string, unknown> }> };
          paths: Record<string, unknown>;
        };
        expect(Object.keys(document.webhooks).sort()).toEqual([...options.events, 'webhook.test'].sort());
        for (const [name, hook] of Object.entries(document.webhooks)) {
          const ref = hook.post.requestBody.content['application/json']!.schema.$ref;
          const schema = document.components.schemas[ref.replace('#/components/schemas/', '')]!;
          expect(Object.keys(schema.properties)).toEqual(['type', 'timestamp', 'data']);
          expect(schema.properties['type']).toEqual({ const: name, type: 'string' });
          expect(hook.post.parameters.map((p) => p.name)).toEqual([
            'webhook-id',
            'webhook-timestamp',
            'webhook-signature',
          ]);
        }
        for (const line of EVENT_OPERATIONS) expect(document.paths).toHaveProperty([line.split(' ')[1]!]);
      },
    );

    test('POST /webhooks answers 201 with the whsec_ secret once; reading and listing never show it; PATCH and DELETE work', async () => {
      const created = await admin().post('/webhooks', {
        url: 'https://hooks.example.com/a',
        events: [options.events[0]],
        description: 'chat',
      });
      expect(created.status).toBe(201);
      expect(created.headers['location']).toBe(`${API}/webhooks/${created.body.id}`);
      expect(created.body).toMatchObject({
        url: 'https://hooks.example.com/a',
        events: [options.events[0]],
        description: 'chat',
        enabled: true,
        disabled_reason: null,
      });
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      const id = created.body.id as string;

      const read = await admin().get(`/webhooks/${id}`);
      expect(read.status).toBe(200);
      expect(read.body).not.toHaveProperty('secret');
      const listed = await admin().get('/webhooks');
      expect(listed.body.data.find((w: { id: string }) => w.id === id)).toEqual(read.body);
      expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);

      const patched = await admin().patch(`/webhooks/${id}`, {
        events: ['*'],
        enabled: false,
        url: 'https://hooks.example.com/b',
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({
        events: ['*'],
        enabled: false,
        url: 'https://hooks.example.com/b',
        description: 'chat',
      });

      expect((await admin().delete(`/webhooks/${id}`)).status).toBe(204);
      expect((await admin().get(`/webhooks/${id}`)).status).toBe(404);
      expect((await admin().get(`/webhooks/${id}/deliveries`)).status).toBe(404);
    });

    test.each([
      [
        'an event type the service does not emit',
        { url: 'https://hooks.example.com/', events: ['nothing.happened'] },
        422,
        'events',
      ],
      ['* next to other names', { url: 'https://hooks.example.com/', events: ['*', 'x.y'] }, 422, 'events'],
      ['no events', { url: 'https://hooks.example.com/', events: [] }, 400, 'events'],
      ['a URL that is not http(s)', { url: 'ftp://hooks.example.com/', events: ['*'] }, 400, 'url'],
      ['no url', { events: ['*'] }, 400, 'url'],
      ['an unknown field', { url: 'https://hooks.example.com/', events: ['*'], secret: 'whsec_mine' }, 400, 'secret'],
    ])(
      'POST /webhooks with %s is refused, naming the field, and stores nothing',
      async (_case, body, status, field) => {
        const before = (await admin().get('/webhooks')).body.pagination.total;
        const refused = await admin().post('/webhooks', body);
        expect(refused.status).toBe(status);
        expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(JSON.stringify(refused.body.errors)).toContain(field);
        expect((await admin().get('/webhooks')).body.pagination.total).toBe(before);
      },
    );

    test('webhooks and the audit log need admin:tenant (403), and a token (401)', async () => {
      for (const path of ['/webhooks', '/audit-events']) {
        expect((await as(setup.readerAuth).get(path)).status).toBe(403);
        expect((await request(setup.app).get(`${API}${path}`)).status).toBe(401);
      }
      expect(
        (await as(setup.readerAuth).post('/webhooks', { url: 'https://hooks.example.com/', events: ['*'] })).status,
      ).toBe(403);
    });

    test('a change is delivered signed per Standard Webhooks ({type, timestamp, data}), and its delivery is listed as succeeded', async () => {
      const endpoint = await receiver();
      const webhook = await subscribe(endpoint.url);
      await dispatcher();
      const change = await setup.trigger();

      const [received] = await endpoint.waitFor(1, 15_000);
      const payload = verify(webhook.secret, received!);
      expect(payload.type).toBe(change.type);
      expect(Date.parse(payload.timestamp)).not.toBeNaN();
      expect((payload.data['object'] as { id?: string }).id ?? change.resourceId).toBe(change.resourceId);
      const [delivery] = await deliveries(webhook.id, (items) => items[0]?.status === 'succeeded');
      expect(delivery).toMatchObject({
        id: received!.headers['webhook-id'],
        event: change.type,
        status: 'succeeded',
        attempt: 1,
        response_status: 200,
        error: null,
        next_attempt_at: null,
      });
    });

    test('a receiver failing twice then succeeding gets the same webhook-id three times; the attempts are listed', async () => {
      const endpoint = await receiver((_request, index) => (index < 2 ? 500 : 200));
      const webhook = await subscribe(endpoint.url, [options.events[0]!]);
      await dispatcher();
      const change = await setup.trigger();
      expect(change.type).toBe(options.events[0]);

      const received = await endpoint.waitFor(3, 15_000);
      expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      for (const one of received) expect(verify(webhook.secret, one).type).toBe(change.type);
      const [delivery] = await deliveries(webhook.id, (items) => items[0]?.status === 'succeeded');
      expect(delivery!['attempt']).toBe(3);
      expect((delivery!['attempts'] as { response_status: number }[]).map((a) => a.response_status)).toEqual([
        500, 500, 200,
      ]);
    });

    test('a delivery pending when the service stops is delivered by the next instance, with the same webhook-id', async () => {
      let up = false;
      const endpoint = await receiver(() => (up ? 200 : 503));
      const webhook = await subscribe(endpoint.url);
      const first = await startDispatcher();
      await setup.trigger();
      await endpoint.waitFor(1, 15_000);
      await first.stop();
      const [pending] = await deliveries(webhook.id, (items) => items.length > 0);
      expect(pending!['status']).toBe('pending');

      up = true;
      await dispatcher();
      await deliveries(webhook.id, (items) => items[0]?.status === 'succeeded');
      expect(new Set(endpoint.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([pending!['id']]));
    });

    test('POST /webhooks/:id/test sends a signed webhook.test; retrying the delivery sends it again with the same webhook-id', async () => {
      const endpoint = await receiver();
      const webhook = await subscribe(endpoint.url, [options.events[0]!]);
      await dispatcher();
      const queued = await admin().post(`/webhooks/${webhook.id}/test`);
      expect(queued.status).toBe(202);
      expect(queued.body).toMatchObject({
        webhook_id: webhook.id,
        event: 'webhook.test',
        status: 'pending',
        event_id: null,
      });
      const [first] = await endpoint.waitFor(1, 15_000);
      expect(verify(webhook.secret, first!)).toMatchObject({ type: 'webhook.test', data: { webhook_id: webhook.id } });
      expect(first!.headers['webhook-id']).toBe(queued.body.id);
      await deliveries(webhook.id, (items) => items[0]?.status === 'succeeded');

      const retried = await admin().post(`/webhooks/${webhook.id}/deliveries/${queued.body.id}/retry`);
      expect(retried.status).toBe(202);
      const [, second] = await endpoint.waitFor(2, 15_000);
      expect(second!.headers['webhook-id']).toBe(queued.body.id);
      expect(second!.body).toBe(first!.body);
      const [delivery] = await deliveries(
        webhook.id,
        (items) => items[0]?.['attempt' as never] === 2 && items[0]?.status === 'succeeded',
      );
      expect(delivery!['attempt']).toBe(2);
      const one = await admin().get(`/webhooks/${webhook.id}/deliveries/${queued.body.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(delivery);
      expect(
        (await admin().post(`/webhooks/${webhook.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`)).status,
      ).toBe(404);
    });

    test('a disabled webhook receives nothing, and cannot be tested (409)', async () => {
      const endpoint = await receiver();
      const webhook = await subscribe(endpoint.url);
      expect((await admin().patch(`/webhooks/${webhook.id}`, { enabled: false })).status).toBe(200);
      await dispatcher();
      await setup.trigger();
      expect((await admin().post(`/webhooks/${webhook.id}/test`)).status).toBe(409);
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(endpoint.received).toHaveLength(0);
    });

    test(
      'POST /webhooks/:id/recover queues again every event of its types since then: one ' +
        'missed while disabled, and one delivered before (same webhook-id)',
      async () => {
        const endpoint = await receiver();
        const webhook = await subscribe(endpoint.url, [options.events[0]!]);
        const since = new Date(Date.now() - 1000).toISOString();
        await dispatcher();
        await setup.trigger();
        const [delivered] = await endpoint.waitFor(1, 15_000);
        expect((await admin().patch(`/webhooks/${webhook.id}`, { enabled: false })).status).toBe(200);
        const missed = await setup.trigger();
        // The relay hands the event on while the endpoint is disabled: no delivery is made for it.
        await new Promise((resolve) => setTimeout(resolve, 700));
        expect((await admin().patch(`/webhooks/${webhook.id}`, { enabled: true })).status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(endpoint.received).toHaveLength(1);

        const recovered = await admin().post(`/webhooks/${webhook.id}/recover`, { since });
        expect(recovered.status).toBe(202);
        expect(recovered.body).toEqual({ webhook_id: webhook.id, since: expect.any(String), requeued: 2 });
        const received = await endpoint.waitFor(3, 15_000);
        const again = received.slice(1);
        expect(again.map((one) => verify(webhook.secret, one).type)).toEqual([missed.type, missed.type]);
        expect(again.map((one) => one.headers['webhook-id'])).toContain(delivered!.headers['webhook-id']);
        const missedBody = again
          .map((one) => verify(webhook.secret, one))
          .find((payload) => JSON.stringify(payload.data).includes(missed.resourceId));
        expect(missedBody).toBeDefined();
        await deliveries(
          webhook.id,
          (items) => items.length === 2 && items.every((item) => item.status === 'succeeded'),
        );
      },
    );

    test.each([
      ['more than 14 days ago', () => new Date(Date.now() - 15 * 24 * 3_600_000).toISOString(), 422],
      ['in the future', () => new Date(Date.now() + 3_600_000).toISOString(), 422],
      ['not an RFC 3339 date-time', () => 'yesterday', 400],
      ['a date without a time', () => '2026-11-20', 400],
    ])(
      'POST /webhooks/:id/recover with since %s is refused naming since, and queues nothing',
      async (_case, since, status) => {
        const webhook = await subscribe('https://hooks.example.com/recover', ['*']);
        const refused = await admin().post(`/webhooks/${webhook.id}/recover`, { since: since() });
        expect(refused.status).toBe(status);
        expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(JSON.stringify(refused.body.errors)).toContain('since');
        expect((await admin().get(`/webhooks/${webhook.id}/deliveries`)).body.data).toEqual([]);
        expect(
          (
            await admin().post('/webhooks/00000000-0000-4000-8000-000000000000/recover', {
              since: new Date().toISOString(),
            })
          ).status,
        ).toBe(404);
        expect(
          (await as(setup.readerAuth).post(`/webhooks/${webhook.id}/recover`, { since: new Date().toISOString() }))
            .status,
        ).toBe(403);
      },
    );

    test('GET /audit-events shows who changed what, when and in which request; its filters narrow it', async () => {
      const since = new Date(Date.now() - 1000).toISOString();
      const change = await setup.trigger();
      const listed = await admin().get(
        `/audit-events?resource_type=${change.resourceType}&resource_id=${change.resourceId}`,
      );
      expect(listed.status).toBe(200);
      const event = listed.body.data.find((e: { action: string }) => e.action === change.type);
      expect(event).toMatchObject({
        action: change.type,
        resource_type: change.resourceType,
        resource_id: change.resourceId,
        actor: { client_id: setup.adminClientId, on_behalf_of: null },
        request_id: change.response.headers['x-request-id'],
      });
      expect(Date.parse(event.occurred_at)).toBeGreaterThanOrEqual(Date.parse(since));
      expect(listed.body.data.every((e: { resource_id: string }) => e.resource_id === change.resourceId)).toBe(true);

      const byActor = await admin().get(`/audit-events?actor=${encodeURIComponent(setup.adminClientId)}&from=${since}`);
      expect(byActor.body.data.map((e: { id: string }) => e.id)).toContain(event.id);
      expect((await admin().get('/audit-events?actor=somebody-else')).body.data).toEqual([]);
      const future = new Date(Date.now() + 3_600_000).toISOString();
      expect((await admin().get(`/audit-events?from=${future}`)).body.data).toEqual([]);
      expect((await admin().get(`/audit-events?from=${future}&to=${since}`)).status).toBe(422);
      expect((await admin().get('/audit-events?from=yesterday')).status).toBe(400);
    });
  });
}
