'use strict';
// The event lists of desk's database for the flat-lists run (bench/flat/run.js, LISTS.md):
// GET /audit-events (10,000 / 1,000,000 events) with each filter alone and a deep keyset page, and
// GET /webhooks and GET /webhooks/{id}/deliveries (10,000 / 100,000 rows) with and without status.
// Seeded with SQL only (generate_series through bench/events/seed-audit.js), the counter triggers
// keeping list_counts as the service's writes do. The same shape at both sizes: the same fraction
// of rows per filter value, events over the same 430 days, each resource with 10 events (its
// history does not grow with the tenant: `resource_id` counts its own index entries, bounded by
// them), deliveries over 30 days. The webhooks are seeded disabled, so no change made by other
// cases fans out to them.
const { seedAuditEvents, auditParams } = require('../events/seed-audit');

const SMALL = 10_000;

async function seedWebhooks(client, tenantId, count) {
  const { rows } = await client.query(
    `INSERT INTO webhooks (tenant_id, url, events, secret, enabled, disabled_reason, created_at)
     SELECT $1::uuid, 'https://hooks.example.com/' || n, ARRAY['*'], 'whsec_bench', false, 'bench', now() - n * interval '1 minute'
       FROM generate_series(1, $2::int) AS n
     RETURNING id::text`,
    [tenantId, count],
  );
  return rows.map((row) => row.id);
}

async function seedDeliveries(client, tenantId, webhookIds, count) {
  // Half of them to the first webhook (the one the cases read), the rest spread over 4 others;
  // statuses 80 % succeeded, 15 % failed, 5 % pending (due in an hour: no attempt during the bench).
  for (let start = 1; start <= count; start += 50_000) {
    await client.query(
      `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_type, body, status, attempt, created_at, next_attempt_at)
       SELECT $1::uuid, ($2::uuid[])[CASE WHEN n % 2 = 0 THEN 1 ELSE 2 + (n / 2) % 4 END], 'ticket.updated', '{"type":"ticket.updated"}',
              CASE WHEN n % 20 < 16 THEN 'succeeded' WHEN n % 20 < 19 THEN 'failed' ELSE 'pending' END, 1,
              now() - make_interval(secs => n::float8 / $5::float8 * 30 * 86400),
              CASE WHEN n % 20 = 19 THEN now() + interval '1 hour' END
         FROM generate_series($3::bigint, $4::bigint) AS n`,
      [tenantId, webhookIds.slice(0, 5), start, Math.min(count, start + 49_999), count],
    );
  }
}

module.exports = {
  service: 'desk',
  scope: 'admin:tenant',

  async seed(client, tenantId, { large }) {
    const events = large ? 1_000_000 : SMALL;
    const others = large ? 100_000 : SMALL;
    // Counters kept by the triggers in batches (not the bench:events shortcut): 1M rows ~1 minute.
    await seedAuditEvents(client, tenantId, { total: events, fast: false });
    const webhookIds = await seedWebhooks(client, tenantId, others);
    await seedDeliveries(client, tenantId, webhookIds, others);
    await client.query('VACUUM ANALYZE webhooks');
    await client.query('VACUUM ANALYZE webhook_deliveries');
    const [deepEvent] = (
      await client.query(
        `SELECT id::text FROM events WHERE tenant_id = $1 ORDER BY occurred_at DESC, seq DESC OFFSET $2 LIMIT 1`,
        [tenantId, Math.floor(events * 0.9)],
      )
    ).rows;
    const [deepWebhook] = (
      await client.query(
        `SELECT id::text FROM webhooks WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
        [tenantId, Math.floor(others * 0.9)],
      )
    ).rows;
    const [deepDelivery] = (
      await client.query(
        `SELECT id::text FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
        [webhookIds[0], Math.floor(others * 0.45)],
      )
    ).rows;
    return {
      ...auditParams(events),
      deepEvent: deepEvent.id,
      webhookId: webhookIds[0],
      deepWebhook: deepWebhook.id,
      deepDelivery: deepDelivery.id,
    };
  },

  cases(p) {
    const q = encodeURIComponent;
    return [
      '/audit-events?per_page=25',
      `/audit-events?per_page=25&resource_type=${q(p.resourceType)}`,
      `/audit-events?per_page=25&resource_id=${q(p.resourceId)}`,
      `/audit-events?per_page=25&actor=${q(p.actor)}`,
      `/audit-events?per_page=25&from=${q(p.from)}`,
      `/audit-events?per_page=25&to=${q(p.to)}`,
      `/audit-events?per_page=25&after=${p.deepEvent}`,
      '/webhooks?per_page=25',
      `/webhooks?per_page=25&after=${p.deepWebhook}`,
      `/webhooks/${p.webhookId}/deliveries?per_page=25`,
      `/webhooks/${p.webhookId}/deliveries?per_page=25&status=failed`,
      `/webhooks/${p.webhookId}/deliveries?per_page=25&after=${p.deepDelivery}`,
    ];
  },
};
