-- time_entry_minutes' trigger, grouped like list_counts' (20261125190000_list_counts_grouped):
-- a statement's minutes are summed by one aggregate over its transition table, grouped by the
-- tenant and each dimension at once, where time_entry_minutes_add took a JSON document per row
-- and called list_counts_keys for it (~40 s of a 1,000,000-row INSERT, now ~1-2 s). The same
-- keys and values: client_id, user_id and billable as their ::text, date as to_jsonb gives it
-- (YYYY-MM-DD whatever DateStyle). An UPDATE nets new rows against old ones first, so an update
-- of neither the minutes nor a counted column writes no row; rows are upserted in key order.
-- time_entry_minutes_add stays (unused by the trigger now; dropping it gains nothing).
CREATE OR REPLACE FUNCTION "time_entry_minutes_on_change"() RETURNS trigger LANGUAGE plpgsql SET work_mem = '64MB' AS $$
DECLARE
    columns CONSTANT TEXT := '"tenant_id" AS "t", "client_id"::text AS "c", "user_id"::text AS "u", to_jsonb("date") #>> ''{}'' AS "d", "billable"::text AS "b"';
    changes TEXT;
BEGIN
    changes := CASE TG_OP
        WHEN 'INSERT' THEN format('SELECT %s, "minutes" AS "m" FROM new_rows', columns)
        WHEN 'DELETE' THEN format('SELECT %s, -"minutes" AS "m" FROM old_rows', columns)
        ELSE format('SELECT "t", "c", "u", "d", "b", sum("m")::int AS "m"
                       FROM (SELECT %1$s, "minutes" AS "m" FROM new_rows UNION ALL SELECT %1$s, -"minutes" AS "m" FROM old_rows) AS u
                      GROUP BY 1, 2, 3, 4, 5 HAVING sum("m") <> 0', columns)
    END;
    EXECUTE format(
        'INSERT INTO "time_entry_minutes" AS m ("tenant_id", "dimension", "value", "minutes", "billable_minutes")
         SELECT "t", "dimension", "value", "minutes", "billable_minutes" FROM (
             SELECT "t",
                    CASE WHEN GROUPING("c") = 0 THEN ''client_id'' WHEN GROUPING("u") = 0 THEN ''user_id''
                         WHEN GROUPING("d") = 0 THEN ''date'' WHEN GROUPING("b") = 0 THEN ''billable'' ELSE ''all'' END AS "dimension",
                    CASE WHEN GROUPING("c") = 0 THEN "c" WHEN GROUPING("u") = 0 THEN "u"
                         WHEN GROUPING("d") = 0 THEN "d" WHEN GROUPING("b") = 0 THEN "b" ELSE '''' END AS "value",
                    sum("m") AS "minutes", coalesce(sum("m") FILTER (WHERE "b" = ''true''), 0) AS "billable_minutes"
               FROM (%s) AS r
              GROUP BY GROUPING SETS (("t"), ("t", "c"), ("t", "u"), ("t", "d"), ("t", "b"))
         ) AS g
          WHERE "value" IS NOT NULL AND ("minutes" <> 0 OR "billable_minutes" <> 0)
          ORDER BY 1, 2, 3
         ON CONFLICT ("tenant_id", "dimension", "value") DO UPDATE
             SET "minutes" = m."minutes" + EXCLUDED."minutes", "billable_minutes" = m."billable_minutes" + EXCLUDED."billable_minutes"',
        changes);
    RETURN NULL;
END $$;
