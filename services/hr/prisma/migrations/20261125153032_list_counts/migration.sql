-- Issue 25: hr's lists answer their first page and exact total flat at any size. The totals come
-- from list_counts (packages/db/sql/list-counts.sql, below word for word), kept by statement-level
-- triggers in the writing transaction; each single filter's ORDER BY ... LIMIT is served by an index.

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
