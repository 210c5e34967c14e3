import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { createOutbound } from '@msp/outbound';
import { createSecretBox } from '@msp/secrets';
import { createDeliveriesRepository, createDispatcher, newSigningSecret, recordEvent, type Dispatcher } from '../src';
import { createWebhooksRepository } from '../src/webhooks/webhooks.repository';
import { eventsDatabase, quietLogger, receiver, waitUntil } from './support';

const TENANT = randomUUID();
const secrets = createSecretBox(randomBytes(32));

let db: Awaited<ReturnType<typeof eventsDatabase>>;
const dispatchers: Dispatcher[] = [];
const receivers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  db = await eventsDatabase();
});
afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  await db.pool.query('DELETE FROM webhooks; DELETE FROM events');
});
afterAll(() => db.close());

function dispatcher(options: { timeoutMs?: number; retryDelaysMs?: number[]; disableAfterMs?: number } = {}) {
  const started = createDispatcher({
    deliveries: createDeliveriesRepository(db.sql),
    outbound: createOutbound({ allowLoopback: true, timeoutMs: options.timeoutMs ?? 2_000 }),
    secrets,
    logger: quietLogger(),
    pollMs: 100,
    retryDelaysMs: options.retryDelaysMs ?? [100, 100, 100],
    disableAfterMs: options.disableAfterMs,
  });
  dispatchers.push(started);
  return started;
}

async function subscribe(url: string, events = ['*']) {
  const secret = newSigningSecret();
  const webhook = await createWebhooksRepository(db.sql).create(TENANT, { url, events, description: null, secret });
  return { ...webhook, secret };
}

async function record(type: string, resourceId: string, object: object = { id: resourceId }) {
  await recordEvent(db.sql, { type, tenantId: TENANT, resourceType: type.split('.')[0]!, resourceId, object });
}

const deliveryRows = async () =>
  (await db.pool.query('SELECT * FROM webhook_deliveries ORDER BY created_at, event_seq')).rows;

describe('webhook deliveries', () => {
  test('are signed per Standard Webhooks: the standardwebhooks package verifies them, and the body is {type, timestamp, data}', async () => {
    const endpoint = await receiver();
    receivers.push(endpoint);
    const webhook = await subscribe(endpoint.url);
    await dispatcher().start();
    await record('ticket.created', 't-1', { id: 't-1', title: 'Printer on fire' });

    const [request] = await endpoint.waitFor(1);
    const payload = new Webhook(webhook.secret).verify(
      request!.body,
      request!.headers as Record<string, string>,
    ) as Record<string, unknown>;
    expect(payload).toEqual({
      type: 'ticket.created',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { object: { id: 't-1', title: 'Printer on fire' } },
    });
    expect(request!.headers['content-type']).toBe('application/json');
    // Another secret does not verify: the signature is really over this message.
    expect(() =>
      new Webhook(newSigningSecret()).verify(request!.body, request!.headers as Record<string, string>),
    ).toThrow();
    const [row] = await waitUntil(async () =>
      (await deliveryRows())[0]?.status === 'succeeded' ? deliveryRows() : undefined,
    );
    expect(row).toMatchObject({
      id: request!.headers['webhook-id'],
      status: 'succeeded',
      attempt: 1,
      response_status: 200,
      error: null,
      next_attempt_at: null,
    });
  });

  test('a receiver failing twice then succeeding gets the same webhook-id each time, and the delivery ends succeeded after 3 attempts', async () => {
    const endpoint = await receiver((_request, index) => (index < 2 ? 503 : 204));
    receivers.push(endpoint);
    const webhook = await subscribe(endpoint.url, ['leave.approved']);
    await dispatcher().start();
    await record('leave.approved', 'l-1');

    const requests = await endpoint.waitFor(3);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const request of requests)
      expect(() =>
        new Webhook(webhook.secret).verify(request.body, request.headers as Record<string, string>),
      ).not.toThrow();
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    const [row] = await waitUntil(async () =>
      (await deliveryRows())[0]?.status === 'succeeded' ? deliveryRows() : undefined,
    );
    expect(row.attempt).toBe(3);
    expect(
      row.attempts.map((a: { response_status: number; error: string | null }) => [a.response_status, a.error]),
    ).toEqual([
      [503, 'HTTP 503'],
      [503, 'HTTP 503'],
      [204, null],
    ]);
    const failing = await db.pool.query('SELECT failing_since FROM webhooks WHERE id = $1', [webhook.id]);
    expect(failing.rows[0].failing_since).toBeNull();
  });

  test('only subscribed event types are delivered, and a delivery with no attempt left ends failed', async () => {
    const endpoint = await receiver(() => 500);
    receivers.push(endpoint);
    await subscribe(endpoint.url, ['ticket.updated']);
    await dispatcher({ retryDelaysMs: [50] }).start();
    await record('ticket.created', 't-2');
    await record('ticket.updated', 't-2');

    await endpoint.waitFor(2);
    const rows = await waitUntil(async () => {
      const all = await deliveryRows();
      return all[0]?.status === 'failed' ? all : undefined;
    });
    expect(rows.map((r) => [r.event_type, r.status, r.attempt, r.next_attempt_at])).toEqual([
      ['ticket.updated', 'failed', 2, null],
    ]);
    expect(endpoint.received.every((r) => JSON.parse(r.body).type === 'ticket.updated')).toBe(true);
  });

  test("that fail together are retried spread out (jitter): each within ±20 % of the schedule's delay, not all at the same moment", async () => {
    const endpoint = await receiver(() => 503);
    receivers.push(endpoint);
    const webhook = await subscribe(endpoint.url);
    await dispatcher({ retryDelaysMs: [60_000] }).start();
    for (let i = 0; i < 20; i++) await record('ticket.created', `jitter-${i}`);

    // Only attempts already answered: a claimed one has attempt 1 but no last_attempt_at yet.
    const rows = await waitUntil(async () => {
      const { rows: all } = await db.pool.query(
        'SELECT extract(epoch FROM next_attempt_at - last_attempt_at) * 1000 AS delay_ms FROM webhook_deliveries ' +
          'WHERE webhook_id = $1 AND attempt = 1 AND next_attempt_at IS NOT NULL AND last_attempt_at IS NOT NULL',
        [webhook.id],
      );
      return all.length === 20 ? all : undefined;
    });
    const delays = rows.map((row) => Number(row.delay_ms));
    // An attempt takes a few ms, so without jitter every delay would be 60 s and a few ms.
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(48_000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(72_000 + 2_000);
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(1_000);
  });

  test("keep the order of one resource's events: the second waits while the first is being retried; another resource does not wait", async () => {
    let firstFailures = 2;
    const endpoint = await receiver((request) => {
      const body = JSON.parse(request.body) as { type: string; data: { object: { id: string } } };
      if (body.type === 'ticket.created' && body.data.object.id === 'a' && firstFailures-- > 0) return 500;
      return 200;
    });
    receivers.push(endpoint);
    await subscribe(endpoint.url);
    await record('ticket.created', 'a', { id: 'a' });
    await record('ticket.updated', 'a', { id: 'a' });
    await record('ticket.created', 'b', { id: 'b' });
    await dispatcher({ retryDelaysMs: [300, 300] }).start();

    await endpoint.waitFor(5);
    const order = endpoint.received.map((r) => {
      const body = JSON.parse(r.body) as { type: string; data: { object: { id: string } } };
      return `${body.type}:${body.data.object.id}`;
    });
    // a's update only after a's creation finally went through; b is not held up by a.
    expect(order.lastIndexOf('ticket.created:a')).toBeLessThan(order.indexOf('ticket.updated:a'));
    expect(order.indexOf('ticket.created:b')).toBeLessThan(order.lastIndexOf('ticket.created:a'));
  });

  test('a delivery pending when the service stops is sent by the next process, with the same webhook-id', async () => {
    let up = false;
    const endpoint = await receiver(() => (up ? 200 : 503));
    receivers.push(endpoint);
    await subscribe(endpoint.url);
    const first = dispatcher({ retryDelaysMs: [200, 200, 200, 200, 200] });
    await first.start();
    await record('timesheet.created', 's-1');
    await endpoint.waitFor(1);
    await first.stop();
    const pending = await deliveryRows();
    expect(pending[0]).toMatchObject({ status: 'pending' });

    up = true;
    await dispatcher().start();
    await waitUntil(async () => ((await deliveryRows())[0]?.status === 'succeeded' ? true : undefined));
    expect(new Set(endpoint.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([pending[0].id]));
  });

  test('a receiver that never answers holds a worker no longer than the timeout', async () => {
    const endpoint = await receiver((_request, index) => (index === 0 ? 'hang' : 200));
    receivers.push(endpoint);
    await subscribe(endpoint.url);
    await dispatcher({ timeoutMs: 300, retryDelaysMs: [100] }).start();
    await record('ticket.created', 't-3');

    const rows = await waitUntil(async () =>
      (await deliveryRows())[0]?.status === 'succeeded' ? deliveryRows() : undefined,
    );
    const [first, second] = rows[0].attempts as {
      duration_ms: number;
      error: string | null;
      response_status: number | null;
    }[];
    expect(first).toMatchObject({ error: 'no answer within 300 ms', response_status: null });
    expect(first!.duration_ms).toBeGreaterThanOrEqual(300);
    expect(second).toMatchObject({ error: null, response_status: 200 });
  });

  test('an endpoint failing for longer than the limit is disabled, says why, and gets nothing more', async () => {
    const endpoint = await receiver(() => 500);
    receivers.push(endpoint);
    const webhook = await subscribe(endpoint.url);
    await db.pool.query("UPDATE webhooks SET failing_since = now() - interval '4 days' WHERE id = $1", [webhook.id]);
    await dispatcher({ retryDelaysMs: [50, 50, 50] }).start();
    await record('ticket.created', 't-4');

    const disabled = await waitUntil(async () => {
      const { rows } = await db.pool.query('SELECT enabled, disabled_reason FROM webhooks WHERE id = $1', [webhook.id]);
      return rows[0].enabled === false ? rows[0] : undefined;
    });
    expect(disabled.disabled_reason).toMatch(
      /^Disabled at .*: every delivery failed for 72 hours \(last: HTTP 500\)\.$/,
    );
    const seen = endpoint.received.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(endpoint.received.length).toBe(seen);
  });

  test('an event of a rolled-back transaction is never delivered', async () => {
    const endpoint = await receiver();
    receivers.push(endpoint);
    await subscribe(endpoint.url);
    await dispatcher().start();
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const tx = {
        $queryRawUnsafe: async (q: string, ...v: unknown[]) => (await client.query(q, v)).rows,
        $executeRawUnsafe: async (q: string, ...v: unknown[]) => (await client.query(q, v)).rowCount ?? 0,
      };
      await recordEvent(tx as never, {
        type: 'ticket.created',
        tenantId: TENANT,
        resourceType: 'ticket',
        resourceId: 'gone',
        object: { id: 'gone' },
      });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await record('ticket.created', 'kept');
    await endpoint.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(endpoint.received.map((r) => JSON.parse(r.body).data.object.id)).toEqual(['kept']);
    expect((await db.pool.query('SELECT resource_id FROM events')).rows).toEqual([{ resource_id: 'kept' }]);
  });
});
