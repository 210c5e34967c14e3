
-- @msp/events, issue 25: flat lists (exact totals from list_counts, an index serving each
-- filter's ORDER BY ... LIMIT) and the retention sweep. Each service's migration
-- <timestamp>_events_lists_retention holds packages/db/sql/list-counts.sql and then this text.

-- The audit log's counted dimensions. `actor_for` is the client a service client acted for when
-- it is another than the caller, so `actor = X` counts exactly as actor_client_id = X plus
-- actor_for = X (the two never name the same row twice). `occurred_day` and `occurred_hour` (UTC)
-- are the time buckets of from/to: whole days from the day counters, the partial edge days from
-- the hour counters, the partial edge hours by an index range scan (bounded by an hour's events).
ALTER TABLE "events"
    ADD COLUMN "actor_for" TEXT GENERATED ALWAYS AS (NULLIF("actor_on_behalf_of", "actor_client_id")) STORED,
    ADD COLUMN "occurred_day" DATE GENERATED ALWAYS AS ((("occurred_at" AT TIME ZONE 'UTC'))::date) STORED,
    ADD COLUMN "occurred_hour" TIMESTAMP(3) GENERATED ALWAYS AS (date_trunc('hour', ("occurred_at" AT TIME ZONE 'UTC'))) STORED;

-- A delivery's webhook and status in one value: the counter of `GET /webhooks/{id}/deliveries?status=`.
ALTER TABLE "webhook_deliveries"
    ADD COLUMN "webhook_status" TEXT GENERATED ALWAYS AS ((("webhook_id")::text || '/' || "status")) STORED;

-- One index per filter serving ORDER BY occurred_at DESC, seq DESC LIMIT (the unfiltered list and
-- from/to use events_tenant_id_occurred_at_seq_idx). resource_id replaces (resource_type,
-- resource_id, seq), which served no query the package runs.
DROP INDEX "events_tenant_id_resource_type_resource_id_seq_idx";
CREATE INDEX "events_tenant_id_resource_type_occurred_at_seq_idx" ON "events"("tenant_id", "resource_type", "occurred_at" DESC, "seq" DESC);
CREATE INDEX "events_tenant_id_resource_id_occurred_at_seq_idx" ON "events"("tenant_id", "resource_id", "occurred_at" DESC, "seq" DESC);
CREATE INDEX "events_tenant_id_actor_client_id_occurred_at_seq_idx" ON "events"("tenant_id", "actor_client_id", "occurred_at" DESC, "seq" DESC);
CREATE INDEX "events_tenant_id_actor_for_occurred_at_seq_idx" ON "events"("tenant_id", "actor_for", "occurred_at" DESC, "seq" DESC);

-- Deliveries of one webhook with one status, newest first; and the retention sweep's question
-- "has this event a delivery still pending?" (pending deliveries only: a small index).
CREATE INDEX "webhook_deliveries_webhook_id_status_created_at_id_idx" ON "webhook_deliveries"("webhook_id", "status", "created_at" DESC, "id" DESC);
CREATE INDEX "webhook_deliveries_pending_event_id_idx" ON "webhook_deliveries"("event_id") WHERE "status" = 'pending';

-- The counters (list-counts.sql) of the three lists, and what the tables already hold.
CREATE TRIGGER "events_counts_insert" AFTER INSERT ON "events" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('audit-events', 'tenant_id', 'resource_type', 'actor_client_id', 'actor_for', 'occurred_day', 'occurred_hour');
CREATE TRIGGER "events_counts_update" AFTER UPDATE ON "events" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('audit-events', 'tenant_id', 'resource_type', 'actor_client_id', 'actor_for', 'occurred_day', 'occurred_hour');
CREATE TRIGGER "events_counts_delete" AFTER DELETE ON "events" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('audit-events', 'tenant_id', 'resource_type', 'actor_client_id', 'actor_for', 'occurred_day', 'occurred_hour');

CREATE TRIGGER "webhooks_counts_insert" AFTER INSERT ON "webhooks" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('webhooks', 'tenant_id');
CREATE TRIGGER "webhooks_counts_update" AFTER UPDATE ON "webhooks" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('webhooks', 'tenant_id');
CREATE TRIGGER "webhooks_counts_delete" AFTER DELETE ON "webhooks" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('webhooks', 'tenant_id');

CREATE TRIGGER "webhook_deliveries_counts_insert" AFTER INSERT ON "webhook_deliveries" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('webhook-deliveries', 'tenant_id', 'webhook_id', 'webhook_status');
CREATE TRIGGER "webhook_deliveries_counts_update" AFTER UPDATE ON "webhook_deliveries" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('webhook-deliveries', 'tenant_id', 'webhook_id', 'webhook_status');
CREATE TRIGGER "webhook_deliveries_counts_delete" AFTER DELETE ON "webhook_deliveries" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('webhook-deliveries', 'tenant_id', 'webhook_id', 'webhook_status');

-- The backfill: one scan of each table grouped by every dimension at once (the values as
-- to_jsonb(row)->>column writes them); a list_counts_keys(to_jsonb(row)) per row was ~50 times slower.
INSERT INTO "list_counts" ("tenant_id", "list", "dimension", "value", "count")
SELECT "tenant_id", 'audit-events', "dimension", "value", "count" FROM (
    SELECT "tenant_id",
           CASE WHEN GROUPING("resource_type") = 0 THEN 'resource_type' WHEN GROUPING("actor_client_id") = 0 THEN 'actor_client_id'
                WHEN GROUPING("actor_for") = 0 THEN 'actor_for' WHEN GROUPING("occurred_day") = 0 THEN 'occurred_day'
                WHEN GROUPING("occurred_hour") = 0 THEN 'occurred_hour' ELSE 'all' END AS "dimension",
           CASE WHEN GROUPING("resource_type") = 0 THEN "resource_type" WHEN GROUPING("actor_client_id") = 0 THEN "actor_client_id"
                WHEN GROUPING("actor_for") = 0 THEN "actor_for" WHEN GROUPING("occurred_day") = 0 THEN to_char("occurred_day", 'YYYY-MM-DD')
                WHEN GROUPING("occurred_hour") = 0 THEN to_char("occurred_hour", 'YYYY-MM-DD"T"HH24:MI:SS') ELSE '' END AS "value",
           count(*) AS "count"
      FROM "events"
     GROUP BY GROUPING SETS (("tenant_id"), ("tenant_id", "resource_type"), ("tenant_id", "actor_client_id"), ("tenant_id", "actor_for"),
                             ("tenant_id", "occurred_day"), ("tenant_id", "occurred_hour"))
) AS g WHERE "value" IS NOT NULL
UNION ALL
SELECT "tenant_id", 'webhooks', 'all', '', count(*) FROM "webhooks" GROUP BY "tenant_id"
UNION ALL
SELECT "tenant_id", 'webhook-deliveries', "dimension", "value", "count" FROM (
    SELECT "tenant_id",
           CASE WHEN GROUPING("webhook_id") = 0 THEN 'webhook_id' WHEN GROUPING("webhook_status") = 0 THEN 'webhook_status' ELSE 'all' END AS "dimension",
           CASE WHEN GROUPING("webhook_id") = 0 THEN "webhook_id"::text WHEN GROUPING("webhook_status") = 0 THEN "webhook_status" ELSE '' END AS "value",
           count(*) AS "count"
      FROM "webhook_deliveries"
     GROUP BY GROUPING SETS (("tenant_id"), ("tenant_id", "webhook_id"), ("tenant_id", "webhook_status"))
) AS g WHERE "value" IS NOT NULL;
