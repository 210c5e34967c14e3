-- Exact list totals at any size (issue 25 point 1): list_counts, kept by statement-level triggers in
-- the writing transaction (packages/db/sql/list-counts.sql), and the indexes
-- that serve each list's ORDER BY ... LIMIT for each single filter.

-- list_counts itself (packages/db/sql/list-counts.sql) is created by 20261125153000_events_lists_retention,
-- the events package's migration that every service runs; this one adds the service's own lists.

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
