'use strict';
// Seeds a tenant's event stream (the audit log), webhooks and deliveries with SQL only, for the
// audit-events flatness run of `pnpm bench:events` and bench/flat/events.js. Same shape at every
// size: the same fractions per filter value, spread over the same 430 days back from now (so
// 30/430 = 7 % of the rows are past the default 400-day retention, for the sweep's measurement),
// each resource with 10 events (a resource's history does not grow with the tenant).
//
//   resource_type  ticket 40 %, user 25 %, client 15 %, comment 12 %, time_entry 8 %
//   actor          portal 50 %; link 30 % (on behalf of portal for half of those); system 20 %
//
// Rows go in by generate_series in batches (one INSERT each). With `fast` (the
// bench's shortcut, docs/performance.md says so): the counter triggers are disabled and the events
// table's indexes dropped while the rows go in, then the indexes built again and the counters
// rebuilt by one GROUP BY GROUPING SETS (the migration's backfill statement: exactly the counters
// the triggers would have kept). Without it every batch keeps them as the service's writes do.

const SPAN_DAYS = 430;
const BATCH = 200_000;
// Through the counter triggers: each statement's transition table becomes one array in the trigger.
const TRIGGER_BATCH = 50_000;
const RESOURCE_TYPES = { ticket: 0.4, user: 0.25, client: 0.15, comment: 0.12, time_entry: 0.08 };

// n → resource_type by the fractions above (n % 100 buckets).
const RESOURCE_TYPE_SQL = `CASE WHEN n % 100 < 40 THEN 'ticket' WHEN n % 100 < 65 THEN 'user' WHEN n % 100 < 80 THEN 'client' WHEN n % 100 < 92 THEN 'comment' ELSE 'time_entry' END`;

/**
 * Adds events `from`..`to` (numbers of the tenant's series) to the tenant, spread evenly over the
 * SPAN_DAYS back from now (event `from` the newest, `to` SPAN_DAYS ago).
 */
async function insertEvents(client, tenantId, from, to, batch) {
  for (let start = from; start <= to; start += batch) {
    const end = Math.min(to, start + batch - 1);
    await client.query(
      `INSERT INTO events (tenant_id, type, resource_type, resource_id, actor_client_id, actor_on_behalf_of, request_id, data, occurred_at, dispatched_at)
       SELECT $1::uuid, rt || '.updated', rt, 'r-' || (n / 10), actor.client_id, actor.on_behalf_of, NULL,
              jsonb_build_object('object', jsonb_build_object('id', 'r-' || (n / 10), 'status', 'open')),
              at, at + interval '50 milliseconds'
         FROM generate_series($2::bigint, $3::bigint) AS n,
              LATERAL (SELECT ${RESOURCE_TYPE_SQL} AS rt,
                              now() - make_interval(secs => (n - $4::bigint + 1)::float8 / ($5::bigint - $4::bigint + 1)::float8 * ${SPAN_DAYS} * 86400) AS at) AS r,
              LATERAL (SELECT CASE WHEN n % 10 < 5 THEN 'portal' WHEN n % 10 < 8 THEN 'link' ELSE 'system' END AS client_id,
                              CASE WHEN n % 10 IN (5, 6) AND n % 20 < 10 THEN 'portal' END AS on_behalf_of) AS actor`,
      [tenantId, start, end, from, to],
    );
  }
}

/** The audit log's counters of the tenant from its rows: the migration's backfill statement (GROUPING SETS), for one tenant. */
async function rebuildCounters(client, tenantId) {
  await client.query(`DELETE FROM list_counts WHERE tenant_id = $1 AND list = 'audit-events'`, [tenantId]);
  await client.query(
    `INSERT INTO list_counts (tenant_id, list, dimension, value, count)
     SELECT tenant_id, 'audit-events', dimension, value, count FROM (
       SELECT tenant_id,
              CASE WHEN GROUPING(resource_type) = 0 THEN 'resource_type' WHEN GROUPING(actor_client_id) = 0 THEN 'actor_client_id'
                   WHEN GROUPING(actor_for) = 0 THEN 'actor_for' WHEN GROUPING(occurred_day) = 0 THEN 'occurred_day'
                   WHEN GROUPING(occurred_hour) = 0 THEN 'occurred_hour' ELSE 'all' END AS dimension,
              CASE WHEN GROUPING(resource_type) = 0 THEN resource_type WHEN GROUPING(actor_client_id) = 0 THEN actor_client_id
                   WHEN GROUPING(actor_for) = 0 THEN actor_for WHEN GROUPING(occurred_day) = 0 THEN to_char(occurred_day, 'YYYY-MM-DD')
                   WHEN GROUPING(occurred_hour) = 0 THEN to_char(occurred_hour, 'YYYY-MM-DD"T"HH24:MI:SS') ELSE '' END AS value,
              count(*) AS count
         FROM events WHERE tenant_id = $1
        GROUP BY GROUPING SETS ((tenant_id), (tenant_id, resource_type), (tenant_id, actor_client_id), (tenant_id, actor_for),
                                (tenant_id, occurred_day), (tenant_id, occurred_hour))
     ) AS g WHERE value IS NOT NULL`,
    [tenantId],
  );
}

/** Runs `work` with the events table's indexes (primary key too) dropped, and builds them again after: a bulk load's usual shortcut. */
async function withoutIndexes(client, work) {
  const { rows: indexes } = await client.query(
    `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'events' AND indexname <> 'events_pkey'`,
  );
  for (const { indexname } of indexes) await client.query(`DROP INDEX "${indexname}"`);
  await client.query('ALTER TABLE events DROP CONSTRAINT events_pkey');
  try {
    await work();
  } finally {
    await client.query(`SET maintenance_work_mem = '256MB'`);
    await client.query('ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (id)');
    for (const { indexdef } of indexes) await client.query(indexdef);
  }
}

/**
 * Seeds (or tops up to) `total` events of the tenant; answers the filter values of the cases.
 * `already`: how many of the series are in already (a top-up from 100k to 10M adds the rest).
 */
async function seedAuditEvents(client, tenantId, { total, already = 0, fast = true }) {
  const started = Date.now();
  // A top-up continues the series at `already + 1` and spreads the new rows over the whole span
  // too: the tenant has the same shape as one seeded at once.
  if (!fast) {
    await insertEvents(client, tenantId, already + 1, total, TRIGGER_BATCH);
  } else {
    await client.query('ALTER TABLE events DISABLE TRIGGER events_counts_insert');
    try {
      await withoutIndexes(client, () => insertEvents(client, tenantId, already + 1, total, BATCH));
    } finally {
      await client.query('ALTER TABLE events ENABLE TRIGGER events_counts_insert');
    }
    await rebuildCounters(client, tenantId);
  }
  await client.query('VACUUM ANALYZE events');
  await client.query('VACUUM ANALYZE list_counts');
  // The load's pages written out now, as pnpm bench does after its seeding: a checkpoint that
  // max_wal_size starts in the middle of the cases that follow would time its writes, not the list.
  await client.query('CHECKPOINT');
  return { seconds: (Date.now() - started) / 1000, ...auditParams(total) };
}

/** Filter values with the same fraction at any size, and a time range of a fixed share of the span (at arbitrary instants: partial edge hours). */
function auditParams(total) {
  const now = Date.now();
  const day = 86_400_000;
  return {
    total,
    resourceType: 'user',
    resourceId: `r-${Math.floor(total / 20)}`,
    actor: 'link',
    // from: 100 days and a few minutes ago; to: 30 days and 17 minutes ago (70/430 of the rows).
    from: new Date(now - 100 * day - 7 * 60_000 - 123).toISOString(),
    to: new Date(now - 30 * day - 17 * 60_000 - 456).toISOString(),
    fractions: RESOURCE_TYPES,
  };
}

module.exports = { seedAuditEvents, auditParams, rebuildCounters, SPAN_DAYS };
