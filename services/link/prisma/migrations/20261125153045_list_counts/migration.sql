-- Exact list totals at any size (issue 25 point 1): list_counts, kept by statement-level triggers in
-- the writing transaction (packages/db/sql/list-counts.sql, below word for word), and the indexes
-- that serve each list's ORDER BY ... LIMIT for each single filter.

-- list_counts: the exact `total` of the services' lists (SPEC §4), kept by statement-level triggers
-- in the transaction that writes the listed table, so a total is one index probe at any size and a
-- rejected request leaves it untouched. One row per (tenant, list, dimension, value): dimension
-- 'all' (value '') counts the whole list, every other dimension is a column of the listed table
-- whose value a filter names (an enum, an id, a boolean, a date as YYYY-MM-DD). A date dimension
-- also answers ranges: the sum of its rows between two dates (dates order as text).
--
-- A table opts in with three triggers (transition tables need one trigger per event):
--   CREATE TRIGGER <table>_counts_insert AFTER INSERT ON <table> REFERENCING NEW TABLE AS new_rows
--     FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('<list>', '<tenant column>', '<dimension>', ...);
--   ... AFTER UPDATE ... REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows ... list_counts_on_update(...)
--   ... AFTER DELETE ... REFERENCING OLD TABLE AS old_rows ... list_counts_on_delete(...)
-- Counter rows are upserted in key order, so concurrent writers lock them in one order and cannot
-- deadlock on them. This text is the same in every service's migrations (packages/db's
-- list-counts test checks it): copy it whole into the migration that first needs it.
CREATE TABLE "list_counts" (
    "tenant_id" UUID NOT NULL,
    "list" TEXT NOT NULL,
    "dimension" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "list_counts_pkey" PRIMARY KEY ("tenant_id", "list", "dimension", "value")
);

-- The counter keys of one changed row: the whole list, and each dimension the row has a value for.
CREATE FUNCTION "list_counts_keys"(r JSONB, dimensions TEXT[]) RETURNS TABLE ("dimension" TEXT, "value" TEXT)
LANGUAGE sql IMMUTABLE AS $$
    SELECT 'all', ''
    UNION ALL
    SELECT d, r->>d FROM unnest(dimensions) AS d WHERE r->>d IS NOT NULL
$$;

-- Adds each (row, delta) of `changes` to its counters. TG_ARGV: list, tenant column, dimensions...
CREATE FUNCTION "list_counts_add"(list TEXT, tenant_column TEXT, dimensions TEXT[], changes JSONB[], deltas INT[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO "list_counts" AS c ("tenant_id", "list", "dimension", "value", "count")
    SELECT (ch.r->>tenant_column)::uuid, list, k.dimension, k.value, SUM(ch.delta)
      FROM unnest(changes, deltas) AS ch(r, delta)
     CROSS JOIN LATERAL "list_counts_keys"(ch.r, dimensions) AS k
     GROUP BY 1, 2, 3, 4
    HAVING SUM(ch.delta) <> 0
     ORDER BY 1, 2, 3, 4
    ON CONFLICT ("tenant_id", "list", "dimension", "value") DO UPDATE SET "count" = c."count" + EXCLUDED."count"
$$;

CREATE FUNCTION "list_counts_on_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "list_counts_add"(TG_ARGV[0], TG_ARGV[1], TG_ARGV[2:TG_NARGS - 1],
        ARRAY(SELECT to_jsonb(n) FROM new_rows n), ARRAY(SELECT 1 FROM new_rows));
    RETURN NULL;
END $$;

CREATE FUNCTION "list_counts_on_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "list_counts_add"(TG_ARGV[0], TG_ARGV[1], TG_ARGV[2:TG_NARGS - 1],
        ARRAY(SELECT to_jsonb(n) FROM new_rows n) || ARRAY(SELECT to_jsonb(o) FROM old_rows o),
        ARRAY(SELECT 1 FROM new_rows) || ARRAY(SELECT -1 FROM old_rows));
    RETURN NULL;
END $$;

CREATE FUNCTION "list_counts_on_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "list_counts_add"(TG_ARGV[0], TG_ARGV[1], TG_ARGV[2:TG_NARGS - 1],
        ARRAY(SELECT to_jsonb(o) FROM old_rows o), ARRAY(SELECT -1 FROM old_rows));
    RETURN NULL;
END $$;

-- Managed tenants (GET /tenants): per owner, by status and by client.
CREATE TRIGGER managed_tenants_counts_insert AFTER INSERT ON managed_tenants REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('managed_tenants', 'owner_tenant_id', 'status', 'client_id');
CREATE TRIGGER managed_tenants_counts_update AFTER UPDATE ON managed_tenants REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('managed_tenants', 'owner_tenant_id', 'status', 'client_id');
CREATE TRIGGER managed_tenants_counts_delete AFTER DELETE ON managed_tenants REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('managed_tenants', 'owner_tenant_id', 'status', 'client_id');

-- Connectors (GET /connectors): per owner; `enabled` answers the default list (enabled only), `all`
-- include_disabled=true. tenant_id (a managed tenant's few connectors) counts through its index.
CREATE TRIGGER connectors_counts_insert AFTER INSERT ON connectors REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('connectors', 'owner_tenant_id', 'enabled');
CREATE TRIGGER connectors_counts_update AFTER UPDATE ON connectors REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('connectors', 'owner_tenant_id', 'enabled');
CREATE TRIGGER connectors_counts_delete AFTER DELETE ON connectors REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('connectors', 'owner_tenant_id', 'enabled');

-- A connector's sync runs (GET /connectors/{id}/syncs): per connector (its id in list_counts.tenant_id).
CREATE TRIGGER sync_runs_counts_insert AFTER INSERT ON sync_runs REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('sync_runs', 'connector_id');
CREATE TRIGGER sync_runs_counts_update AFTER UPDATE ON sync_runs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('sync_runs', 'connector_id');
CREATE TRIGGER sync_runs_counts_delete AFTER DELETE ON sync_runs REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('sync_runs', 'connector_id');

-- A connector's mirror (GET /connectors/{id}/users and /groups): per connector, no filter. No UPDATE
-- trigger: with no dimension and a connector_id that never changes, an update cannot change a
-- count, and every sync rewrites up to all of the mirror's rows (the trigger would turn each of
-- them into JSON twice for nothing). Should a filter come, its UPDATE trigger comes with it.
CREATE TRIGGER directory_users_counts_insert AFTER INSERT ON directory_users REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('directory_users', 'connector_id');
CREATE TRIGGER directory_users_counts_delete AFTER DELETE ON directory_users REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('directory_users', 'connector_id');
CREATE TRIGGER directory_groups_counts_insert AFTER INSERT ON directory_groups REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('directory_groups', 'connector_id');
CREATE TRIGGER directory_groups_counts_delete AFTER DELETE ON directory_groups REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('directory_groups', 'connector_id');

-- Onboardings (GET /onboardings): per owner, by status.
CREATE TRIGGER onboardings_counts_insert AFTER INSERT ON onboardings REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('onboardings', 'owner_tenant_id', 'status');
CREATE TRIGGER onboardings_counts_update AFTER UPDATE ON onboardings REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('onboardings', 'owner_tenant_id', 'status');
CREATE TRIGGER onboardings_counts_delete AFTER DELETE ON onboardings REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('onboardings', 'owner_tenant_id', 'status');

-- Offboardings (GET /offboardings): per owner, by status.
CREATE TRIGGER offboardings_counts_insert AFTER INSERT ON offboardings REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('offboardings', 'owner_tenant_id', 'status');
CREATE TRIGGER offboardings_counts_update AFTER UPDATE ON offboardings REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('offboardings', 'owner_tenant_id', 'status');
CREATE TRIGGER offboardings_counts_delete AFTER DELETE ON offboardings REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('offboardings', 'owner_tenant_id', 'status');

-- Moves (GET /moves): per owner, by status.
CREATE TRIGGER moves_counts_insert AFTER INSERT ON moves REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('moves', 'owner_tenant_id', 'status');
CREATE TRIGGER moves_counts_update AFTER UPDATE ON moves REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('moves', 'owner_tenant_id', 'status');
CREATE TRIGGER moves_counts_delete AFTER DELETE ON moves REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('moves', 'owner_tenant_id', 'status');

-- The counters of the rows already there (values as the triggers write them: to_jsonb(row)->>column).
INSERT INTO "list_counts" ("tenant_id", "list", "dimension", "value", "count")
SELECT owner_tenant_id, 'managed_tenants', 'all', '', count(*) FROM managed_tenants GROUP BY 1
UNION ALL SELECT owner_tenant_id, 'managed_tenants', 'status', status::text, count(*) FROM managed_tenants GROUP BY 1, 4
UNION ALL SELECT owner_tenant_id, 'managed_tenants', 'client_id', client_id::text, count(*) FROM managed_tenants GROUP BY 1, 4
UNION ALL SELECT owner_tenant_id, 'connectors', 'all', '', count(*) FROM connectors GROUP BY 1
UNION ALL SELECT owner_tenant_id, 'connectors', 'enabled', enabled::text, count(*) FROM connectors GROUP BY 1, 4
UNION ALL SELECT connector_id, 'sync_runs', 'all', '', count(*) FROM sync_runs GROUP BY 1
UNION ALL SELECT connector_id, 'directory_users', 'all', '', count(*) FROM directory_users GROUP BY 1
UNION ALL SELECT connector_id, 'directory_groups', 'all', '', count(*) FROM directory_groups GROUP BY 1
UNION ALL SELECT owner_tenant_id, 'onboardings', 'all', '', count(*) FROM onboardings GROUP BY 1
UNION ALL SELECT owner_tenant_id, 'onboardings', 'status', status::text, count(*) FROM onboardings GROUP BY 1, 4
UNION ALL SELECT owner_tenant_id, 'offboardings', 'all', '', count(*) FROM offboardings GROUP BY 1
UNION ALL SELECT owner_tenant_id, 'offboardings', 'status', status::text, count(*) FROM offboardings GROUP BY 1, 4
UNION ALL SELECT owner_tenant_id, 'moves', 'all', '', count(*) FROM moves GROUP BY 1
UNION ALL SELECT owner_tenant_id, 'moves', 'status', status::text, count(*) FROM moves GROUP BY 1, 4;

-- Each single filter's ORDER BY created_at DESC, id DESC ... LIMIT straight from an index.
-- DropIndex
DROP INDEX "managed_tenants_owner_tenant_id_client_id_idx";

-- CreateIndex
CREATE INDEX "managed_tenants_owner_tenant_id_client_id_created_at_id_idx" ON "managed_tenants"("owner_tenant_id", "client_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "managed_tenants_owner_tenant_id_status_created_at_id_idx" ON "managed_tenants"("owner_tenant_id", "status", "created_at" DESC, "id" DESC);

-- DropIndex
DROP INDEX "connectors_managed_tenant_id_enabled_idx";

-- CreateIndex
CREATE INDEX "connectors_owner_tenant_id_enabled_created_at_id_idx" ON "connectors"("owner_tenant_id", "enabled", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "connectors_managed_tenant_id_enabled_created_at_id_idx" ON "connectors"("managed_tenant_id", "enabled", "created_at" DESC, "id" DESC);
