import { randomUUID } from 'node:crypto';
import { createDeliveriesRepository, type TransactionalSql } from '../src';
import { CLAIM_DUE } from '../src/delivery/deliveries.repository';
import { createWebhooksRepository } from '../src/webhooks/webhooks.repository';
import { eventsDatabase } from './support';

// The dispatcher's claim: which due deliveries it hands out, in which order, and that it walks the
// pending queue's index however many deliveries are pending and whatever the statistics say.
const TENANT = randomUUID();
let db: Awaited<ReturnType<typeof eventsDatabase>>;

beforeAll(async () => {
  db = await eventsDatabase();
});
afterEach(() => db.pool.query('DELETE FROM webhooks'));
afterAll(() => db.close());

async function webhook(enabled = true) {
  const created = await createWebhooksRepository(db.sql).create(TENANT, {
    url: 'http://127.0.0.1:9/hook',
    events: ['*'],
    description: null,
    secret: 'sealed',
  });
  if (!enabled) await db.pool.query('UPDATE webhooks SET enabled = false WHERE id = $1', [created.id]);
  return created.id;
}

/** A pending delivery of `resource`'s event `seq`, due `dueSecondsAgo` ago. */
async function pending(webhookId: string, resource: string, seq: number, dueSecondsAgo: number) {
  const { rows } = await db.pool.query(
    `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_type, resource_type, resource_id, event_seq, body, next_attempt_at)
     VALUES ($1, $2, 'ticket.created', 'ticket', $3, $4, '{}', now() - $5 * interval '1 second') RETURNING id::text`,
    [TENANT, webhookId, resource, seq, dueSecondsAgo],
  );
  return rows[0].id as string;
}

describe('claiming due deliveries', () => {
  test("the oldest due come first; a disabled endpoint's, a resource's later event and one not yet due wait; each claimed one is leased", async () => {
    const [open, disabled] = [await webhook(), await webhook(false)];
    const oldest = await pending(open, 'a', 1, 300);
    await pending(disabled, 'b', 2, 400);
    const second = await pending(open, 'c', 3, 200);
    await pending(open, 'a', 4, 250); // waits for the resource's event 1
    await pending(open, 'd', 5, -60); // due in a minute
    const third = await pending(open, 'e', 6, 100);

    const claimed = await createDeliveriesRepository(db.sql).claim(10, 60_000);

    expect(claimed.map((delivery) => delivery.id)).toEqual([oldest, second, third]);
    expect(claimed.every((delivery) => delivery.attempt === 1 && delivery.url === 'http://127.0.0.1:9/hook')).toBe(
      true,
    );
    const { rows } = await db.pool.query('SELECT id::text FROM webhook_deliveries WHERE locked_until > now()');
    expect(rows.map((row) => row.id).sort()).toEqual([oldest, second, third].sort());
    // Leased: a second claim finds nothing more that is due.
    expect(await createDeliveriesRepository(db.sql).claim(10, 60_000)).toEqual([]);
  });

  test("with 20,000 pending in a table never analysed (as after a deployment), the claim reads the queue's index in order and stops at its limit", async () => {
    // A database of its own: its webhook_deliveries has no statistics at all, and autovacuum may not add them.
    const fresh = await eventsDatabase();
    try {
      await fresh.pool.query('ALTER TABLE webhook_deliveries SET (autovacuum_enabled = false)');
      const { rows: hooks } = await fresh.pool.query(
        `INSERT INTO webhooks (tenant_id, url, events, secret) SELECT $1, 'http://127.0.0.1:9/' || i, '{*}', 'sealed'
          FROM generate_series(1, 100) i RETURNING id`,
        [TENANT],
      );
      await fresh.pool.query(
        `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_type, resource_type, resource_id, event_seq, body, next_attempt_at)
         SELECT $1, w, 'ticket.created', 'ticket', 't' || e, e, '{}', now() FROM unnest($2::uuid[]) w, generate_series(1, 200) e`,
        [TENANT, hooks.map((hook) => hook.id)],
      );

      // The repository's own claim, its plan taken in its transaction right before it runs
      // (left to itself the planner sorts the whole backlog here).
      const plans: string[] = [];
      const observed: TransactionalSql = {
        ...fresh.sql,
        $transaction: (work) =>
          fresh.sql.$transaction((tx) =>
            work({
              $executeRawUnsafe: tx.$executeRawUnsafe,
              async $queryRawUnsafe<T>(query: string, ...values: unknown[]) {
                if (query === CLAIM_DUE)
                  plans.push(JSON.stringify(await tx.$queryRawUnsafe(`EXPLAIN (FORMAT JSON) ${query}`, ...values)));
                return tx.$queryRawUnsafe<T>(query, ...values);
              },
            }),
          ),
      };
      const claimed = await createDeliveriesRepository(observed).claim(8, 60_000);

      expect(plans).toHaveLength(1);
      expect(plans[0]).not.toMatch(/"Node Type":"[^"]*Sort"/); // neither a Sort nor an Incremental Sort
      expect(plans[0]).toContain('"Index Name":"webhook_deliveries_status_next_attempt_at_event_seq_idx"');
      expect(claimed).toHaveLength(8);
      // The first event of eight resources: nothing later of a resource before its first.
      const { rows } = await fresh.pool.query(
        'SELECT event_seq::int AS seq FROM webhook_deliveries WHERE locked_until IS NOT NULL',
      );
      expect(rows.map((row) => row.seq)).toEqual(Array(8).fill(1));
    } finally {
      await fresh.close();
    }
  });
});
