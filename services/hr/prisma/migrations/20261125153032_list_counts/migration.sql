-- Issue 25: hr's lists answer their first page and exact total flat at any size. The totals come
-- from list_counts (packages/db/sql/list-counts.sql), kept by statement-level
-- triggers in the writing transaction; each single filter's ORDER BY ... LIMIT is served by an index.

-- list_counts itself (packages/db/sql/list-counts.sql) is created by 20261125153000_events_lists_retention,
-- the events package's migration that every service runs; this one adds the service's own lists.

-- employees: the whole list only. Its two filters (user_id, personnel_number) are unique in the
-- tenant: their totals are count(*) through the unique index, at most one row.
CREATE TRIGGER employees_counts_insert AFTER INSERT ON employees REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('employees', 'tenant_id');
CREATE TRIGGER employees_counts_update AFTER UPDATE ON employees REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('employees', 'tenant_id');
CREATE TRIGGER employees_counts_delete AFTER DELETE ON employees REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('employees', 'tenant_id');

-- timesheets: by user, and by day (from/to: the sum of the day counters in the range).
CREATE TRIGGER timesheets_counts_insert AFTER INSERT ON timesheets REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('timesheets', 'tenant_id', 'user_id', 'date');
CREATE TRIGGER timesheets_counts_update AFTER UPDATE ON timesheets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('timesheets', 'tenant_id', 'user_id', 'date');
CREATE TRIGGER timesheets_counts_delete AFTER DELETE ON timesheets REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('timesheets', 'tenant_id', 'user_id', 'date');

-- leaves: by user, status and type, and by first and last day (from/to select the leaves touching
-- the range: all − those ending before `from` − those starting after `to`).
CREATE TRIGGER leaves_counts_insert AFTER INSERT ON leaves REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('leaves', 'tenant_id', 'user_id', 'status', 'type', 'start_date', 'end_date');
CREATE TRIGGER leaves_counts_update AFTER UPDATE ON leaves REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('leaves', 'tenant_id', 'user_id', 'status', 'type', 'start_date', 'end_date');
CREATE TRIGGER leaves_counts_delete AFTER DELETE ON leaves REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('leaves', 'tenant_id', 'user_id', 'status', 'type', 'start_date', 'end_date');

-- (contracts have no counters: their list is one employee's history, and its total is count(*)
-- through contracts_tenant_id_employee_id_valid_from_key, bounded by that employee's contracts.)

-- The counters of the rows already there, by the same keys the triggers use.
INSERT INTO "list_counts" ("tenant_id", "list", "dimension", "value", "count")
SELECT t.tenant_id, 'employees', k.dimension, k.value, count(*)
  FROM employees t CROSS JOIN LATERAL "list_counts_keys"(to_jsonb(t), ARRAY[]::text[]) AS k
 GROUP BY 1, 2, 3, 4;
INSERT INTO "list_counts" ("tenant_id", "list", "dimension", "value", "count")
SELECT t.tenant_id, 'timesheets', k.dimension, k.value, count(*)
  FROM timesheets t CROSS JOIN LATERAL "list_counts_keys"(to_jsonb(t), ARRAY['user_id', 'date']) AS k
 GROUP BY 1, 2, 3, 4;
INSERT INTO "list_counts" ("tenant_id", "list", "dimension", "value", "count")
SELECT t.tenant_id, 'leaves', k.dimension, k.value, count(*)
  FROM leaves t CROSS JOIN LATERAL "list_counts_keys"(to_jsonb(t), ARRAY['user_id', 'status', 'type', 'start_date', 'end_date']) AS k
 GROUP BY 1, 2, 3, 4;

-- Leaves filtered by user, status or type: each in the list's order (latest start, then id), so a
-- page stops at its LIMIT. The user index also serves the overlap check (a range of start_date).
DROP INDEX "leaves_tenant_id_user_id_start_date_idx";
CREATE INDEX "leaves_tenant_id_user_id_start_date_id_idx" ON "leaves"("tenant_id", "user_id", "start_date" DESC, "id" DESC);
CREATE INDEX "leaves_tenant_id_status_start_date_id_idx" ON "leaves"("tenant_id", "status", "start_date" DESC, "id" DESC);
CREATE INDEX "leaves_tenant_id_type_start_date_id_idx" ON "leaves"("tenant_id", "type", "start_date" DESC, "id" DESC);
