-- Issue 25: every list's exact `total` (and the time entries' minute totals) read from counters
-- kept in the writing transaction, so a first page and its total cost the same at any size.
-- tickets keep their own ticket_counts (20261122031455_helpdesk); the other lists use the shared
-- list_counts of @msp/db (created by the events migration before this one).

-- list_counts itself (packages/db/sql/list-counts.sql) is created by 20261125153000_events_lists_retention,
-- the events package's migration that every service runs; this one adds the service's own lists.

-- clients, calendars, sla_policies: the whole list only (no filters).
CREATE TRIGGER "clients_counts_insert" AFTER INSERT ON "clients" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('clients', 'tenant_id');
CREATE TRIGGER "clients_counts_update" AFTER UPDATE ON "clients" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('clients', 'tenant_id');
CREATE TRIGGER "clients_counts_delete" AFTER DELETE ON "clients" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('clients', 'tenant_id');

CREATE TRIGGER "calendars_counts_insert" AFTER INSERT ON "calendars" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('calendars', 'tenant_id');
CREATE TRIGGER "calendars_counts_update" AFTER UPDATE ON "calendars" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('calendars', 'tenant_id');
CREATE TRIGGER "calendars_counts_delete" AFTER DELETE ON "calendars" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('calendars', 'tenant_id');

CREATE TRIGGER "sla_policies_counts_insert" AFTER INSERT ON "sla_policies" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('sla_policies', 'tenant_id');
CREATE TRIGGER "sla_policies_counts_update" AFTER UPDATE ON "sla_policies" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('sla_policies', 'tenant_id');
CREATE TRIGGER "sla_policies_counts_delete" AFTER DELETE ON "sla_policies" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('sla_policies', 'tenant_id');

-- users: GET /users lists the active ones (dimension active, value 'true').
CREATE TRIGGER "users_counts_insert" AFTER INSERT ON "users" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('users', 'tenant_id', 'active');
CREATE TRIGGER "users_counts_update" AFTER UPDATE ON "users" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('users', 'tenant_id', 'active');
CREATE TRIGGER "users_counts_delete" AFTER DELETE ON "users" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('users', 'tenant_id', 'active');

-- api_clients: GET /api-clients lists a tenant's live clients (dimension live, value 'true').
-- Service clients have no tenant and are nobody's list: the generic functions would count them
-- under a NULL tenant (and fail), so these triggers hand list_counts_add only the tenants' rows,
-- each as {tenant_id, live}.
CREATE FUNCTION "api_clients_list_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM "list_counts_add"('api_clients', 'tenant_id', ARRAY['live'],
            ARRAY(SELECT jsonb_build_object('tenant_id', n.tenant_id, 'live', n.revoked_at IS NULL) FROM new_rows n WHERE n.tenant_id IS NOT NULL),
            ARRAY(SELECT 1 FROM new_rows n WHERE n.tenant_id IS NOT NULL));
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM "list_counts_add"('api_clients', 'tenant_id', ARRAY['live'],
            ARRAY(SELECT jsonb_build_object('tenant_id', o.tenant_id, 'live', o.revoked_at IS NULL) FROM old_rows o WHERE o.tenant_id IS NOT NULL),
            ARRAY(SELECT -1 FROM old_rows o WHERE o.tenant_id IS NOT NULL));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER "api_clients_counts_insert" AFTER INSERT ON "api_clients" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "api_clients_list_counts"();
CREATE TRIGGER "api_clients_counts_update" AFTER UPDATE ON "api_clients" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "api_clients_list_counts"();
CREATE TRIGGER "api_clients_counts_delete" AFTER DELETE ON "api_clients" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "api_clients_list_counts"();

-- time_entries: the whole list and each filter (client_id, user_id, billable, and date for
-- from/to: `date` is a day, so a range is the sum of its days' counters, exact at both edges).
CREATE TRIGGER "time_entries_counts_insert" AFTER INSERT ON "time_entries" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('time_entries', 'tenant_id', 'client_id', 'user_id', 'date', 'billable');
CREATE TRIGGER "time_entries_counts_update" AFTER UPDATE ON "time_entries" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('time_entries', 'tenant_id', 'client_id', 'user_id', 'date', 'billable');
CREATE TRIGGER "time_entries_counts_delete" AFTER DELETE ON "time_entries" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('time_entries', 'tenant_id', 'client_id', 'user_id', 'date', 'billable');

-- GET /time-entries also answers `totals` (the minutes, and the billable minutes, of every entry
-- matching the filters): list_counts counts rows, so the minutes have a table of their own, with
-- the same keys and kept the same way (statement triggers, upserts in key order).
CREATE TABLE "time_entry_minutes" (
    "tenant_id" UUID NOT NULL,
    "dimension" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "minutes" BIGINT NOT NULL,
    "billable_minutes" BIGINT NOT NULL,

    CONSTRAINT "time_entry_minutes_pkey" PRIMARY KEY ("tenant_id", "dimension", "value")
);

CREATE FUNCTION "time_entry_minutes_add"(changes JSONB[], deltas INT[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO "time_entry_minutes" AS m ("tenant_id", "dimension", "value", "minutes", "billable_minutes")
    SELECT (ch.r->>'tenant_id')::uuid, k.dimension, k.value,
           SUM(ch.delta * (ch.r->>'minutes')::bigint),
           coalesce(SUM(ch.delta * (ch.r->>'minutes')::bigint) FILTER (WHERE (ch.r->>'billable')::boolean), 0)
      FROM unnest(changes, deltas) AS ch(r, delta)
     CROSS JOIN LATERAL "list_counts_keys"(ch.r, ARRAY['client_id', 'user_id', 'date', 'billable']) AS k
     GROUP BY 1, 2, 3
    HAVING SUM(ch.delta * (ch.r->>'minutes')::bigint) <> 0
        OR coalesce(SUM(ch.delta * (ch.r->>'minutes')::bigint) FILTER (WHERE (ch.r->>'billable')::boolean), 0) <> 0
     ORDER BY 1, 2, 3
    ON CONFLICT ("tenant_id", "dimension", "value") DO UPDATE
        SET "minutes" = m."minutes" + EXCLUDED."minutes", "billable_minutes" = m."billable_minutes" + EXCLUDED."billable_minutes"
$$;

CREATE FUNCTION "time_entry_minutes_on_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM "time_entry_minutes_add"(ARRAY(SELECT to_jsonb(n) FROM new_rows n), ARRAY(SELECT 1 FROM new_rows));
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM "time_entry_minutes_add"(ARRAY(SELECT to_jsonb(o) FROM old_rows o), ARRAY(SELECT -1 FROM old_rows));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER "time_entries_minutes_insert" AFTER INSERT ON "time_entries" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "time_entry_minutes_on_change"();
CREATE TRIGGER "time_entries_minutes_update" AFTER UPDATE ON "time_entries" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "time_entry_minutes_on_change"();
CREATE TRIGGER "time_entries_minutes_delete" AFTER DELETE ON "time_entries" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "time_entry_minutes_on_change"();

-- Backfill: the counters of the rows that exist.
INSERT INTO "list_counts" ("tenant_id", "list", "dimension", "value", "count")
SELECT t.tenant_id, 'clients', k.dimension, k.value, count(*) FROM "clients" t CROSS JOIN LATERAL "list_counts_keys"(to_jsonb(t), ARRAY[]::text[]) k GROUP BY 1, 2, 3, 4
UNION ALL
SELECT t.tenant_id, 'calendars', k.dimension, k.value, count(*) FROM "calendars" t CROSS JOIN LATERAL "list_counts_keys"(to_jsonb(t), ARRAY[]::text[]) k GROUP BY 1, 2, 3, 4
UNION ALL
SELECT t.tenant_id, 'sla_policies', k.dimension, k.value, count(*) FROM "sla_policies" t CROSS JOIN LATERAL "list_counts_keys"(to_jsonb(t), ARRAY[]::text[]) k GROUP BY 1, 2, 3, 4
UNION ALL
SELECT t.tenant_id, 'users', k.dimension, k.value, count(*) FROM "users" t CROSS JOIN LATERAL "list_counts_keys"(to_jsonb(t), ARRAY['active']) k GROUP BY 1, 2, 3, 4
UNION ALL
SELECT t.tenant_id, 'api_clients', k.dimension, k.value, count(*)
  FROM "api_clients" t CROSS JOIN LATERAL "list_counts_keys"(jsonb_build_object('live', t.revoked_at IS NULL), ARRAY['live']) k
 WHERE t.tenant_id IS NOT NULL GROUP BY 1, 2, 3, 4
UNION ALL
SELECT t.tenant_id, 'time_entries', k.dimension, k.value, count(*)
  FROM "time_entries" t CROSS JOIN LATERAL "list_counts_keys"(to_jsonb(t), ARRAY['client_id', 'user_id', 'date', 'billable']) k GROUP BY 1, 2, 3, 4;

INSERT INTO "time_entry_minutes" ("tenant_id", "dimension", "value", "minutes", "billable_minutes")
SELECT t.tenant_id, k.dimension, k.value, sum(t.minutes), coalesce(sum(t.minutes) FILTER (WHERE t.billable), 0)
  FROM "time_entries" t CROSS JOIN LATERAL "list_counts_keys"(to_jsonb(t), ARRAY['client_id', 'user_id', 'date', 'billable']) k
 GROUP BY 1, 2, 3;

-- The billable filter's page, read off one index in the list's order (the other filters had theirs).
CREATE INDEX "time_entries_tenant_billable_date_idx" ON "time_entries"("tenant_id", "billable", "date" DESC, "created_at" DESC, "id" DESC);

-- GET /api-clients' page in its order (it had only (tenant_id)).
CREATE INDEX "api_clients_tenant_id_created_at_id_idx" ON "api_clients"("tenant_id", "created_at" DESC, "id" DESC);
