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
