import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createEventsRetention } from '../src';
import { createAuditRepository } from '../src/audit/audit.repository';
import { createWebhooksRepository } from '../src/webhooks/webhooks.repository';
import { eventsDatabase, quietLogger, waitUntil } from './support';

// Through the real database: the retention sweep, and the exact totals of the audit log, the
// webhooks and their deliveries read from list_counts (migration *_events_lists_retention).
const TENANT = randomUUID();
const OTHER = randomUUID();
const DAY = 86_400_000;

let db: Awaited<ReturnType<typeof eventsDatabase>>;
beforeAll(async () => {
  db = await eventsDatabase();
});
afterEach(() => db.pool.query('DELETE FROM webhooks; DELETE FROM events'));
afterAll(() => db.close());

const ago = (days: number, ms = 0) => new Date(Date.now() - days * DAY - ms);

/** `count` events of the tenant at `at` (one apart by a second), relayed unless said otherwise; answers their ids. */
async function events(
  tenantId: string,
  count: number,
  at: Date,
  options: {
    dispatched?: boolean;
    actor?: string;
    onBehalfOf?: string | null;
    resourceType?: string;
    resourceId?: string;
  } = {},
): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO events (tenant_id, type, resource_type, resource_id, actor_client_id, actor_on_behalf_of, data, occurred_at, dispatched_at)
     SELECT $1::uuid, $2 || '.updated', $2, coalesce($3, 'r-' || (n % 7)), $4, $5, '{}'::jsonb, $6::timestamptz - n * interval '1 second',
            CASE WHEN $7 THEN $6::timestamptz - n * interval '1 second' END
       FROM generate_series(1, $8::int) AS n RETURNING id::text`,
    [
      tenantId,
      options.resourceType ?? 'ticket',
      options.resourceId ?? null,
      options.actor ?? 'portal',
      options.onBehalfOf ?? null,
      at,
      options.dispatched ?? true,
      count,
    ],
  );
  return rows.map((row) => row.id);
}

/** Every counter of the audit log against count(*) of the rows it stands for. */
async function expectCountersExact(tenantId: string) {
  const key = (r: { dimension: string; value: string; count: string }) =>
    `${r.dimension}=${r.value}:${Number(r.count)}`;
  const { rows: counters } = await db.pool.query(
    `SELECT dimension, value, count FROM list_counts WHERE tenant_id = $1 AND list = 'audit-events' AND count <> 0`,
    [tenantId],
  );
  const { rows: actual } = await db.pool.query(
    `SELECT 'all' AS dimension, '' AS value, count(*) FROM events WHERE tenant_id = $1 HAVING count(*) > 0
     UNION ALL SELECT 'resource_type', resource_type, count(*) FROM events WHERE tenant_id = $1 GROUP BY 2
     UNION ALL SELECT 'actor_client_id', actor_client_id, count(*) FROM events WHERE tenant_id = $1 GROUP BY 2
     UNION ALL SELECT 'actor_for', actor_for, count(*) FROM events WHERE tenant_id = $1 AND actor_for IS NOT NULL GROUP BY 2
     UNION ALL SELECT 'occurred_day', occurred_day::text, count(*) FROM events WHERE tenant_id = $1 GROUP BY 2
     UNION ALL SELECT 'occurred_hour', to_jsonb(occurred_hour) #>> '{}', count(*) FROM events WHERE tenant_id = $1 GROUP BY 2
     UNION ALL SELECT 'type', type, count(*) FROM events WHERE tenant_id = $1 GROUP BY 2`,
    [tenantId],
  );
  expect(counters.map(key).sort()).toEqual(actual.map(key).sort());
}

const countOf = async (where: string, values: unknown[]) =>
  Number((await db.pool.query(`SELECT count(*) AS c FROM events WHERE ${where}`, values)).rows[0].c);

describe('the retention sweep', () => {
  test(
    'When it runs, then events older than the retention are removed, younger ones, unrelayed ' +
      'ones and those with a pending delivery kept, and the counters stay exact',
    async () => {
      const old = await events(TENANT, 30, ago(401));
      const young = await events(TENANT, 20, ago(399));
      const unrelayed = await events(TENANT, 2, ago(500), { dispatched: false });
      await events(OTHER, 5, ago(402));
      const webhook = await createWebhooksRepository(db.sql).create(TENANT, {
        url: 'https://hooks.example/x',
        events: ['*'],
        description: null,
        secret: 's',
      });
      // A delivery still pending (retrying: attempt 2) and a finished one, of two old events.
      await db.pool.query(
        `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, body, status, attempt, created_at)
       VALUES ($1, $2, $3, 'ticket.updated', '{}', 'pending', 2, now() - interval '401 days'), ($1, $2, $4,
         'ticket.updated', '{}', 'succeeded', 1, now() - interval '401 days')`,
        [TENANT, webhook.id, old[0], old[1]],
      );

      const result = await createEventsRetention({
        db: db.sql,
        logger: quietLogger(),
        days: 400,
        intervalMs: 0,
        batchSize: 7,
        pauseMs: 0,
      }).sweep();

      expect(result).toMatchObject({ events: 29 + 5, deliveries: 1 });
      expect(result.batches).toBeGreaterThan(5);
      const { rows: left } = await db.pool.query<{ id: string }>('SELECT id::text FROM events WHERE tenant_id = $1', [
        TENANT,
      ]);
      expect(left.map((row) => row.id).sort()).toEqual([old[0]!, ...young, ...unrelayed].sort());
      expect(await countOf('tenant_id = $1', [OTHER])).toBe(0);
      const { rows: deliveries } = await db.pool.query('SELECT status FROM webhook_deliveries');
      expect(deliveries).toEqual([{ status: 'pending' }]);
      await expectCountersExact(TENANT);
      await expectCountersExact(OTHER);
      // The emptied days' counters are gone, not left at 0.
      expect(
        (
          await db.pool.query(
            `SELECT count(*)::int AS n FROM list_counts WHERE tenant_id = $1 AND count = 0 AND dimension LIKE 'occurred%'`,
            [OTHER],
          )
        ).rows[0].n,
      ).toBe(0);
      const page = await createAuditRepository(db.sql).list(TENANT, {}, { page: 1, per_page: 5 });
      expect(page.total).toBe(1 + 20 + 2);

      // Once delivered, the next sweep removes it.
      await db.pool.query(`UPDATE webhook_deliveries SET status = 'succeeded'`);
      expect(
        await createEventsRetention({ db: db.sql, logger: quietLogger(), days: 400, intervalMs: 0 }).sweep(),
      ).toMatchObject({ events: 1, deliveries: 1 });
      expect(await countOf('id = $1', [old[0]])).toBe(0);
      await expectCountersExact(TENANT);
    },
  );

  test('When the service stops in the middle of a sweep and starts again, then the sweep runs at the start and removes the rest', async () => {
    await events(TENANT, 50, ago(450));
    const first = createEventsRetention({
      db: db.sql,
      logger: quietLogger(),
      days: 400,
      intervalMs: 60_000,
      batchSize: 10,
      pauseMs: 300,
    });
    first.start();
    await waitUntil(async () => (await countOf('tenant_id = $1', [TENANT])) < 50);
    await first.stop();
    const left = await countOf('tenant_id = $1', [TENANT]);
    expect(left).toBeGreaterThan(0);
    await expectCountersExact(TENANT);

    // The restart: a new process, an hour's interval, and yet it sweeps right away.
    const second = createEventsRetention({
      db: db.sql,
      logger: quietLogger(),
      days: 400,
      intervalMs: 3_600_000,
      batchSize: 10,
      pauseMs: 0,
    });
    second.start();
    try {
      await waitUntil(async () => (await countOf('tenant_id = $1', [TENANT])) === 0);
    } finally {
      await second.stop();
    }
    await expectCountersExact(TENANT);
  });

  test('When the interval is 0, then start() sweeps nothing', async () => {
    await events(TENANT, 3, ago(450));
    const off = createEventsRetention({ db: db.sql, logger: quietLogger(), days: 400, intervalMs: 0 });
    off.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await off.stop();
    expect(await countOf('tenant_id = $1', [TENANT])).toBe(3);
  });
});

describe("the audit log's totals", () => {
  test('When each filter alone, none, or several are asked, then the total equals count(*) of the matching events, at hour and day edges too', async () => {
    const base = Date.parse('2026-11-20T10:30:00.000Z');
    await events(TENANT, 200, new Date(base), { actor: 'portal' });
    await events(TENANT, 150, new Date(base - 2 * DAY), {
      actor: 'link',
      onBehalfOf: 'portal',
      resourceType: 'employee',
    });
    await events(TENANT, 40, new Date(base - 5 * DAY), {
      actor: 'link',
      onBehalfOf: 'link',
      resourceType: 'user',
      resourceId: 'u-1',
    });
    await events(OTHER, 30, new Date(base));
    const audit = createAuditRepository(db.sql);
    const total = async (filter: Parameters<typeof audit.list>[1]) =>
      (await audit.list(TENANT, filter, { page: 1, per_page: 3 })).total;

    expect(await total({})).toBe(390);
    expect(await total({ resource_type: 'employee' })).toBe(150);
    expect(await total({ resource_id: 'u-1' })).toBe(40);
    expect(await total({ resource_id: 'r-3' })).toBe(await countOf(`tenant_id = $1 AND resource_id = 'r-3'`, [TENANT]));
    // As the caller or on whose behalf: link made 190, on behalf of portal 150 of them.
    expect(await total({ actor: 'portal' })).toBe(350);
    expect(await total({ actor: 'link' })).toBe(190);
    const instants = [
      base - 5 * DAY - 30 * 60_000,
      base - 5 * DAY + 1,
      base - 4 * DAY,
      base - 2 * DAY - 17 * 60_000 - 123,
      base - 2 * DAY,
      base - 3_600_000 - 1,
      base - 60_000,
      base,
      base + 1,
      Date.parse('2026-11-20T00:00:00.000Z'),
      Date.parse('2026-11-18T10:00:00.000Z'),
    ];
    for (const from of [undefined, ...instants]) {
      for (const to of [undefined, ...instants]) {
        if (from !== undefined && to !== undefined && to <= from) continue;
        const f = from === undefined ? undefined : new Date(from).toISOString();
        const t = to === undefined ? undefined : new Date(to).toISOString();
        const expected = await countOf(
          'tenant_id = $1 AND ($2::timestamptz IS NULL OR occurred_at >= $2) AND ($3::timestamptz IS NULL OR occurred_at < $3)',
          [TENANT, f ?? null, t ?? null],
        );
        expect({ f, t, total: await total({ from: f, to: t }) }).toEqual({ f, t, total: expected });
      }
    }
    expect(await total({ actor: 'link', resource_type: 'user' })).toBe(40);
    expect(await total({ resource_type: 'ticket', from: new Date(base - 60_000).toISOString() })).toBe(60);
  });

  test(
    'When the log is filtered by one or several event types, alone or with other filters, then ' +
      'each page is in order and the total is count(*) of the matching events',
    async () => {
      const base = Date.parse('2026-11-20T10:30:00.000Z');
      await events(TENANT, 30, new Date(base), { actor: 'portal', resourceType: 'ticket' });
      await events(TENANT, 20, new Date(base - 1000), { actor: 'link', onBehalfOf: 'portal', resourceType: 'comment' });
      await events(TENANT, 10, new Date(base - 500), { actor: 'link', resourceType: 'user' });
      await events(OTHER, 5, new Date(base), { resourceType: 'ticket' });
      await expectCountersExact(TENANT);
      const audit = createAuditRepository(db.sql);
      const expected = (where: string, values: unknown[] = []) =>
        db.pool.query<{ id: string }>(
          `SELECT id::text FROM events WHERE tenant_id = $1 AND ${where} ORDER BY occurred_at DESC, seq DESC`,
          [TENANT, ...values],
        );
      for (const [filter, where, values] of [
        [{ types: ['ticket.updated'] }, `type = 'ticket.updated'`, []],
        [{ types: ['comment.updated', 'user.updated'] }, `type IN ('comment.updated', 'user.updated')`, []],
        [
          { types: ['comment.updated', 'user.updated'], actor: 'portal' },
          `type IN ('comment.updated', 'user.updated') AND (actor_client_id = 'portal' OR actor_for = 'portal')`,
          [],
        ],
        [
          { types: ['ticket.updated', 'user.updated'], from: new Date(base - 5000).toISOString() },
          `type IN ('ticket.updated', 'user.updated') AND occurred_at >= $2`,
          [new Date(base - 5000).toISOString()],
        ],
        [{ types: ['nothing.happened'] }, 'false', []],
      ] as const) {
        const { rows } = await expected(where, [...values]);
        const first = await audit.list(TENANT, filter, { page: 1, per_page: 7 });
        const second = await audit.list(TENANT, filter, { page: 2, per_page: 7 });
        expect(first.total).toBe(rows.length);
        expect([...first.items, ...second.items].map((event) => event.id)).toEqual(
          rows.slice(0, 14).map((row) => row.id),
        );
      }
    },
  );

  test(
    'When from or to cuts an hour anywhere, then the total is exact whether the hour is ' +
      'counted by its part inside or by its counter less the part outside',
    async () => {
      // Events all through five hours (a few every 17 minutes), so every part of an hour holds some.
      const start = Date.parse('2026-11-20T08:00:00.000Z');
      for (let minute = 2; minute < 5 * 60; minute += 17) await events(TENANT, 3, new Date(start + minute * 60_000));
      const audit = createAuditRepository(db.sql);
      const total = async (filter: Parameters<typeof audit.list>[1]) =>
        (await audit.list(TENANT, filter, { page: 1, per_page: 1 })).total;
      // Minutes past the hour on both sides of the half: 3 and 14 (the part before is the smaller),
      // 29 and 31 (about even), 46 and 58 (the part after is the smaller); and whole hours.
      const instants = [0, 3, 14, 29, 31, 46, 58, 60, 75, 89, 91, 118, 120, 163, 181, 240, 271, 299].map(
        (minute) => start + minute * 60_000 + 500,
      );
      for (const from of [undefined, ...instants]) {
        for (const to of [undefined, ...instants]) {
          if (from !== undefined && to !== undefined && to <= from) continue;
          const f = from === undefined ? undefined : new Date(from).toISOString();
          const t = to === undefined ? undefined : new Date(to).toISOString();
          if (f === undefined && t === undefined) continue;
          const expected = await countOf(
            'tenant_id = $1 AND ($2::timestamptz IS NULL OR occurred_at >= $2) AND ($3::timestamptz IS NULL OR occurred_at < $3)',
            [TENANT, f ?? null, t ?? null],
          );
          expect({ f, t, total: await total({ from: f, to: t }) }).toEqual({ f, t, total: expected });
        }
      }
    },
  );

  test('When pages follow `after`, then they continue the order without gaps or repeats, with and without a filter; an unknown `after` is a 400', async () => {
    await events(TENANT, 30, new Date(), { actor: 'portal' });
    await events(TENANT, 30, new Date(Date.now() - 500), { actor: 'link', onBehalfOf: 'portal' });
    const audit = createAuditRepository(db.sql);
    for (const filter of [{}, { actor: 'portal' }, { resource_type: 'ticket' }]) {
      const all = await audit.list(TENANT, filter, { page: 1, per_page: 100 });
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await audit.list(TENANT, filter, { page: 1, per_page: 7, after });
        expect(page.total).toBe(60);
        seen.push(...page.items.map((item) => item.id));
        if (page.items.length < 7) break;
        after = page.items[6]!.id;
      }
      expect(seen).toEqual(all.items.map((item) => item.id));
    }
    await expect(audit.list(TENANT, {}, { page: 1, per_page: 7, after: randomUUID() })).rejects.toMatchObject({
      status: 400,
    });
  });
});

describe("the deliveries' totals", () => {
  test('When deliveries change status and a webhook is removed, then the totals per webhook and per status stay exact', async () => {
    const repo = createWebhooksRepository(db.sql);
    const [a, b] = [
      await repo.create(TENANT, { url: 'https://a.example', events: ['*'], description: null, secret: 's' }),
      await repo.create(TENANT, { url: 'https://b.example', events: ['*'], description: null, secret: 's' }),
    ];
    await db.pool.query(
      `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_type, body, status)
       SELECT $1, CASE WHEN n % 3 = 0 THEN $3::uuid ELSE $2::uuid END, 'x', '{}', CASE WHEN n % 2 = 0 THEN 'succeeded'
         ELSE 'pending' END FROM generate_series(1, 60) AS n`,
      [TENANT, a.id, b.id],
    );
    await db.pool.query(
      `UPDATE webhook_deliveries SET status = 'failed' WHERE ctid IN (SELECT ctid FROM webhook_deliveries WHERE status = 'pending' LIMIT 5)`,
    );
    const page = { page: 1, per_page: 2 };
    for (const hook of [a, b]) {
      for (const status of [undefined, 'pending', 'succeeded', 'failed'] as const) {
        const expected = Number(
          (
            await db.pool.query(
              'SELECT count(*) AS c FROM webhook_deliveries WHERE webhook_id = $1 AND ($2::text IS NULL OR status = $2)',
              [hook.id, status ?? null],
            )
          ).rows[0].c,
        );
        expect({ status, total: (await repo.listDeliveries(TENANT, hook.id, status, page)).total }).toEqual({
          status,
          total: expected,
        });
      }
    }
    expect((await repo.list(TENANT, page)).total).toBe(2);
    await repo.remove(TENANT, b.id);
    expect((await repo.list(TENANT, page)).total).toBe(1);
    expect((await repo.listDeliveries(TENANT, b.id, undefined, page)).total).toBe(0);
    const next = await repo.listDeliveries(TENANT, a.id, 'succeeded', { page: 1, per_page: 5 });
    const after = await repo.listDeliveries(TENANT, a.id, 'succeeded', {
      page: 1,
      per_page: 5,
      after: next.items[4]!.id,
    });
    expect(after.items.map((d) => d.id)).toEqual(
      (await repo.listDeliveries(TENANT, a.id, 'succeeded', { page: 2, per_page: 5 })).items.map((d) => d.id),
    );
  });
});

describe('an `after` that names no item of the list', () => {
  const unknownAfter = {
    status: 400,
    code: 'validation-error',
    errors: [{ field: 'after', message: expect.stringContaining('names no item') }],
  };

  test(
    "When the webhooks or a webhook's deliveries are paged after an unknown id, another tenant's webhook or " +
      "another webhook's delivery, then it is the 400 of `after`; after a known last item, an empty page",
    async () => {
      const repo = createWebhooksRepository(db.sql);
      const [a, b] = [
        await repo.create(TENANT, { url: 'https://a.example', events: ['*'], description: null, secret: 's' }),
        await repo.create(TENANT, { url: 'https://b.example', events: ['*'], description: null, secret: 's' }),
      ];
      const others = await repo.create(OTHER, {
        url: 'https://o.example',
        events: ['*'],
        description: null,
        secret: 's',
      });
      const { rows } = await db.pool.query<{ id: string; webhook_id: string }>(
        `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_type, body)
        VALUES ($1, $2, 'x', '{}'), ($1, $3, 'x', '{}') RETURNING id::text, webhook_id::text`,
        [TENANT, a.id, b.id],
      );
      const ofB = rows.find((row) => row.webhook_id === b.id)!.id;
      const ofA = rows.find((row) => row.webhook_id === a.id)!.id;
      const page = { page: 1, per_page: 5 };

      for (const after of [randomUUID(), others.id])
        await expect(repo.list(TENANT, { ...page, after })).rejects.toMatchObject(unknownAfter);
      for (const after of [randomUUID(), ofB]) {
        await expect(repo.listDeliveries(TENANT, a.id, undefined, { ...page, after })).rejects.toMatchObject(
          unknownAfter,
        );
        await expect(repo.listDeliveries(TENANT, a.id, 'pending', { ...page, after })).rejects.toMatchObject(
          unknownAfter,
        );
      }
      const last = (await repo.list(TENANT, page)).items.at(-1)!.id;
      expect(await repo.list(TENANT, { ...page, after: last })).toEqual({ items: [], total: 2 });
      expect(await repo.listDeliveries(TENANT, a.id, undefined, { ...page, after: ofA })).toEqual({
        items: [],
        total: 1,
      });
    },
  );

  test(
    "When the audit log is paged after an unknown id or another tenant's event, then it " +
      'is the 400 of `after`; after its last event, an empty page',
    async () => {
      const [mine] = await events(TENANT, 1, new Date());
      const [theirs] = await events(OTHER, 1, new Date());
      const audit = createAuditRepository(db.sql);
      for (const filter of [{}, { actor: 'portal' }]) {
        for (const after of [randomUUID(), theirs!])
          await expect(audit.list(TENANT, filter, { page: 1, per_page: 5, after })).rejects.toMatchObject(unknownAfter);
        expect(await audit.list(TENANT, filter, { page: 1, per_page: 5, after: mine! })).toEqual({
          items: [],
          total: 1,
        });
      }
    },
  );
});

describe("the migration's backfill", () => {
  test('When the counters are rebuilt by its statement, then they are the ones the triggers kept, row for row', async () => {
    await events(TENANT, 120, ago(3), { actor: 'link', onBehalfOf: 'portal' });
    await events(TENANT, 80, ago(40), { actor: 'portal', onBehalfOf: 'portal', resourceType: 'user' });
    await events(OTHER, 30, ago(1));
    const repo = createWebhooksRepository(db.sql);
    const hook = await repo.create(TENANT, { url: 'https://a.example', events: ['*'], description: null, secret: 's' });
    await db.pool.query(
      `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_type, body, status) SELECT $1, $2, 'x', '{}', CASE
        WHEN n % 3 = 0 THEN 'failed' ELSE 'succeeded' END FROM generate_series(1, 20) AS n`,
      [TENANT, hook.id],
    );
    const snapshot = async () =>
      (
        await db.pool.query(
          `SELECT tenant_id, list, dimension, value, count::int FROM list_counts WHERE count <> 0 ORDER BY 1, 2, 3, 4`,
        )
      ).rows;
    const kept = await snapshot();
    const sql = readFileSync(path.join(__dirname, '../prisma/lists-retention.sql'), 'utf8');
    const types = readFileSync(path.join(__dirname, '../prisma/audit-type.sql'), 'utf8');
    await db.pool.query('DELETE FROM list_counts');
    await db.pool.query(sql.slice(sql.indexOf('INSERT INTO "list_counts"')));
    await db.pool.query(types.slice(types.indexOf('INSERT INTO "list_counts"')));
    expect(await snapshot()).toEqual(kept);
    expect(kept.length).toBeGreaterThan(10);
  });
});
