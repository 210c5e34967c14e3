-- list_counts' triggers, grouped: list_counts_on_insert/_update/_delete of list-counts.sql
-- replaced (same triggers, same arguments, same counters and values). A statement's changes are
-- counted by one aggregate over its transition table, grouped by the tenant and by each dimension
-- at once (GROUPING SETS: one pass), where the first version built a JSON document and called
-- list_counts_keys for every row: a 1,000,000-row INSERT with three dimensions spent ~4-5 s in the
-- trigger, now ~1 s.
-- Values are the text to_jsonb(row)->>column gave (what the readers' filters hold): a column whose
-- ::text is that text whatever the session's settings (text, varchar, uuid, boolean, an enum, an
-- integer) is cast; any other type (a date, a timestamp: ::text follows DateStyle, and a
-- timestamp's has a space where to_jsonb has 'T') is turned into text by to_jsonb(column).
-- An UPDATE nets its new rows (+1) against its old rows (-1) by tenant and dimension values
-- first, so the rows it changed no counted value of drop out before the counting, and an update
-- of other columns touches no counter. Counter rows are upserted in key order (concurrent
-- writers lock them in one order and cannot deadlock on them), only those whose count changes.
-- work_mem: the planner hashes all the grouping sets in one pass only if it expects their tables
-- to fit (it cannot know a transition table's distinct values); below that it sorts the whole
-- statement's rows, on disk at 4MB (2.4 s instead of 0.9 s at 1,000,000 rows). The memory used
-- is that of the groups actually there.
-- list_counts_add and list_counts_keys stay: desk's api_clients trigger calls list_counts_add
-- (desk's time_entry_minutes trigger is grouped the same way by its own later migration).
-- This text is the same in every service's migrations (packages/db's list-counts test checks
-- it): copy it whole into the service's *_list_counts_grouped migration.

-- The statement that applies one trigger's changes to list_counts: `op` the trigger's TG_OP,
-- `args` its TG_ARGV (list, tenant column, dimensions...), `relation` its table (TG_RELID), whose
-- column types choose each value's text. Run by the trigger function itself (EXECUTE ... USING
-- list), since only it sees the transition tables new_rows and old_rows.
CREATE FUNCTION "list_counts_statement"(relation OID, op TEXT, args TEXT[]) RETURNS TEXT
LANGUAGE plpgsql STABLE AS $$
DECLARE
    -- The columns of one changed row: the tenant, then one text value per dimension (NULL: no counter).
    columns TEXT;
    keys TEXT := '"t"';
    sets TEXT := '("t")';
    dimension_case TEXT := '';
    value_case TEXT := '';
    changes TEXT;
    d RECORD;
BEGIN
    args := args[array_lower(args, 1):];  -- TG_ARGV counts from 0, a slice from 1
    columns := format('%I::uuid AS "t"', args[2]);
    FOR d IN
        SELECT k.i, k.name, (t.typtype = 'e' OR a.atttypid IN ('text'::regtype, 'varchar'::regtype, 'uuid'::regtype, 'bool'::regtype,
                                                              'int2'::regtype, 'int4'::regtype, 'int8'::regtype)) AS plain
          FROM unnest(args[3:]) WITH ORDINALITY AS k(name, i)
          LEFT JOIN pg_attribute a ON a.attrelid = relation AND a.attname = k.name AND NOT a.attisdropped
          LEFT JOIN pg_type t ON t.oid = a.atttypid
         ORDER BY k.i
    LOOP
        columns := columns || format(CASE WHEN d.plain THEN ', %I::text AS %I' ELSE ', to_jsonb(%I) #>> ''{}'' AS %I' END, d.name, 'v' || d.i);
        keys := keys || format(', %I', 'v' || d.i);
        sets := sets || format(', ("t", %I)', 'v' || d.i);
        dimension_case := dimension_case || format(' WHEN GROUPING(%I) = 0 THEN %L', 'v' || d.i, d.name);
        value_case := value_case || format(' WHEN GROUPING(%I) = 0 THEN %I', 'v' || d.i, 'v' || d.i);
    END LOOP;
    changes := CASE op
        WHEN 'INSERT' THEN format('SELECT %s, 1 AS "n" FROM new_rows', columns)
        WHEN 'DELETE' THEN format('SELECT %s, -1 AS "n" FROM old_rows', columns)
        ELSE format('SELECT %1$s, sum("n")::int AS "n" FROM (SELECT %2$s, 1 AS "n" FROM new_rows UNION ALL SELECT %2$s, -1 AS "n" FROM old_rows) AS u
                      GROUP BY %1$s HAVING sum("n") <> 0', keys, columns)
    END;
    IF dimension_case = '' THEN
        dimension_case := '''all''';
        value_case := '''''';
    ELSE
        dimension_case := 'CASE' || dimension_case || ' ELSE ''all'' END';
        value_case := 'CASE' || value_case || ' ELSE '''' END';
    END IF;
    RETURN format(
        'INSERT INTO "list_counts" AS c ("tenant_id", "list", "dimension", "value", "count")
         SELECT "t", $1, "dimension", "value", "n" FROM (
             SELECT "t", %s AS "dimension", %s AS "value", sum("n") AS "n"
               FROM (%s) AS r
              GROUP BY GROUPING SETS (%s)
         ) AS g
          WHERE "value" IS NOT NULL AND "n" <> 0
          ORDER BY 1, 3, 4
         ON CONFLICT ("tenant_id", "list", "dimension", "value") DO UPDATE SET "count" = c."count" + EXCLUDED."count"',
        dimension_case, value_case, changes, sets);
END $$;

CREATE OR REPLACE FUNCTION "list_counts_on_insert"() RETURNS trigger LANGUAGE plpgsql SET work_mem = '64MB' AS $$
BEGIN
    EXECUTE "list_counts_statement"(TG_RELID, TG_OP, TG_ARGV) USING TG_ARGV[0];
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "list_counts_on_update"() RETURNS trigger LANGUAGE plpgsql SET work_mem = '64MB' AS $$
BEGIN
    EXECUTE "list_counts_statement"(TG_RELID, TG_OP, TG_ARGV) USING TG_ARGV[0];
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "list_counts_on_delete"() RETURNS trigger LANGUAGE plpgsql SET work_mem = '64MB' AS $$
BEGIN
    EXECUTE "list_counts_statement"(TG_RELID, TG_OP, TG_ARGV) USING TG_ARGV[0];
    RETURN NULL;
END $$;
