-- @msp/events: the counters of the audit log and of webhook deliveries kept by static SQL. The
-- triggers of these two tables called list-counts-grouped.sql's generic functions, which build
-- their statement from the catalogue and EXECUTE it, so PostgreSQL parsed and planned it anew on
-- every statement; every event insert and every relay (its UPDATE of events and INSERT into
-- webhook_deliveries, run even when they touch no row) paid for that. Here each table has its own
-- trigger function whose statements are written out: PL/pgSQL prepares them once per trigger and
-- session and reuses the plans.
-- The statements are the ones list_counts_statement builds for these triggers' arguments (same
-- counters, same values, same netting of an UPDATE, same key order of the upserts), with the list
-- written in; `webhooks` keeps the generic functions (written rarely).
-- Each service's migration <timestamp>_events_list_counts_static holds this text word for word (the
-- package's schema-copies test checks it). CREATE OR REPLACE TRIGGER swaps each trigger in one
-- statement: no write is counted twice or missed.

CREATE FUNCTION "events_list_counts"() RETURNS trigger LANGUAGE plpgsql SET work_mem = '64MB' AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "list_counts" AS c ("tenant_id", "list", "dimension", "value", "count")
        SELECT "t", 'audit-events', "dimension", "value", "n" FROM (
            SELECT "t",
                   CASE WHEN GROUPING(v1) = 0 THEN 'resource_type' WHEN GROUPING(v2) = 0 THEN 'actor_client_id' WHEN GROUPING(v3) = 0 THEN 'actor_for'
                        WHEN GROUPING(v4) = 0 THEN 'occurred_day' WHEN GROUPING(v5) = 0 THEN 'occurred_hour' WHEN GROUPING(v6) = 0 THEN 'type' ELSE 'all' END AS "dimension",
                   CASE WHEN GROUPING(v1) = 0 THEN v1 WHEN GROUPING(v2) = 0 THEN v2 WHEN GROUPING(v3) = 0 THEN v3
                        WHEN GROUPING(v4) = 0 THEN v4 WHEN GROUPING(v5) = 0 THEN v5 WHEN GROUPING(v6) = 0 THEN v6 ELSE '' END AS "value",
                   sum("n") AS "n"
              FROM (SELECT tenant_id::uuid AS "t", resource_type::text AS v1, actor_client_id::text AS v2, actor_for::text AS v3,
                           to_jsonb(occurred_day) #>> '{}' AS v4, to_jsonb(occurred_hour) #>> '{}' AS v5, type::text AS v6, 1 AS "n"
                      FROM new_rows) AS r
             GROUP BY GROUPING SETS (("t"), ("t", v1), ("t", v2), ("t", v3), ("t", v4), ("t", v5), ("t", v6))
        ) AS g
         WHERE "value" IS NOT NULL AND "n" <> 0
         ORDER BY 1, 3, 4
        ON CONFLICT ("tenant_id", "list", "dimension", "value") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO "list_counts" AS c ("tenant_id", "list", "dimension", "value", "count")
        SELECT "t", 'audit-events', "dimension", "value", "n" FROM (
            SELECT "t",
                   CASE WHEN GROUPING(v1) = 0 THEN 'resource_type' WHEN GROUPING(v2) = 0 THEN 'actor_client_id' WHEN GROUPING(v3) = 0 THEN 'actor_for'
                        WHEN GROUPING(v4) = 0 THEN 'occurred_day' WHEN GROUPING(v5) = 0 THEN 'occurred_hour' WHEN GROUPING(v6) = 0 THEN 'type' ELSE 'all' END AS "dimension",
                   CASE WHEN GROUPING(v1) = 0 THEN v1 WHEN GROUPING(v2) = 0 THEN v2 WHEN GROUPING(v3) = 0 THEN v3
                        WHEN GROUPING(v4) = 0 THEN v4 WHEN GROUPING(v5) = 0 THEN v5 WHEN GROUPING(v6) = 0 THEN v6 ELSE '' END AS "value",
                   sum("n") AS "n"
              FROM (SELECT "t", v1, v2, v3, v4, v5, v6, sum("n")::int AS "n"
                      FROM (SELECT tenant_id::uuid AS "t", resource_type::text AS v1, actor_client_id::text AS v2, actor_for::text AS v3,
                                   to_jsonb(occurred_day) #>> '{}' AS v4, to_jsonb(occurred_hour) #>> '{}' AS v5, type::text AS v6, 1 AS "n"
                              FROM new_rows
                            UNION ALL
                            SELECT tenant_id::uuid AS "t", resource_type::text AS v1, actor_client_id::text AS v2, actor_for::text AS v3,
                                   to_jsonb(occurred_day) #>> '{}' AS v4, to_jsonb(occurred_hour) #>> '{}' AS v5, type::text AS v6, -1 AS "n"
                              FROM old_rows) AS u
                     GROUP BY "t", v1, v2, v3, v4, v5, v6 HAVING sum("n") <> 0) AS r
             GROUP BY GROUPING SETS (("t"), ("t", v1), ("t", v2), ("t", v3), ("t", v4), ("t", v5), ("t", v6))
        ) AS g
         WHERE "value" IS NOT NULL AND "n" <> 0
         ORDER BY 1, 3, 4
        ON CONFLICT ("tenant_id", "list", "dimension", "value") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
    ELSE
        INSERT INTO "list_counts" AS c ("tenant_id", "list", "dimension", "value", "count")
        SELECT "t", 'audit-events', "dimension", "value", "n" FROM (
            SELECT "t",
                   CASE WHEN GROUPING(v1) = 0 THEN 'resource_type' WHEN GROUPING(v2) = 0 THEN 'actor_client_id' WHEN GROUPING(v3) = 0 THEN 'actor_for'
                        WHEN GROUPING(v4) = 0 THEN 'occurred_day' WHEN GROUPING(v5) = 0 THEN 'occurred_hour' WHEN GROUPING(v6) = 0 THEN 'type' ELSE 'all' END AS "dimension",
                   CASE WHEN GROUPING(v1) = 0 THEN v1 WHEN GROUPING(v2) = 0 THEN v2 WHEN GROUPING(v3) = 0 THEN v3
                        WHEN GROUPING(v4) = 0 THEN v4 WHEN GROUPING(v5) = 0 THEN v5 WHEN GROUPING(v6) = 0 THEN v6 ELSE '' END AS "value",
                   sum("n") AS "n"
              FROM (SELECT tenant_id::uuid AS "t", resource_type::text AS v1, actor_client_id::text AS v2, actor_for::text AS v3,
                           to_jsonb(occurred_day) #>> '{}' AS v4, to_jsonb(occurred_hour) #>> '{}' AS v5, type::text AS v6, -1 AS "n"
                      FROM old_rows) AS r
             GROUP BY GROUPING SETS (("t"), ("t", v1), ("t", v2), ("t", v3), ("t", v4), ("t", v5), ("t", v6))
        ) AS g
         WHERE "value" IS NOT NULL AND "n" <> 0
         ORDER BY 1, 3, 4
        ON CONFLICT ("tenant_id", "list", "dimension", "value") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION "webhook_deliveries_list_counts"() RETURNS trigger LANGUAGE plpgsql SET work_mem = '64MB' AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "list_counts" AS c ("tenant_id", "list", "dimension", "value", "count")
        SELECT "t", 'webhook-deliveries', "dimension", "value", "n" FROM (
            SELECT "t",
                   CASE WHEN GROUPING(v1) = 0 THEN 'webhook_id' WHEN GROUPING(v2) = 0 THEN 'webhook_status' ELSE 'all' END AS "dimension",
                   CASE WHEN GROUPING(v1) = 0 THEN v1 WHEN GROUPING(v2) = 0 THEN v2 ELSE '' END AS "value",
                   sum("n") AS "n"
              FROM (SELECT tenant_id::uuid AS "t", webhook_id::text AS v1, webhook_status::text AS v2, 1 AS "n" FROM new_rows) AS r
             GROUP BY GROUPING SETS (("t"), ("t", v1), ("t", v2))
        ) AS g
         WHERE "value" IS NOT NULL AND "n" <> 0
         ORDER BY 1, 3, 4
        ON CONFLICT ("tenant_id", "list", "dimension", "value") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO "list_counts" AS c ("tenant_id", "list", "dimension", "value", "count")
        SELECT "t", 'webhook-deliveries', "dimension", "value", "n" FROM (
            SELECT "t",
                   CASE WHEN GROUPING(v1) = 0 THEN 'webhook_id' WHEN GROUPING(v2) = 0 THEN 'webhook_status' ELSE 'all' END AS "dimension",
                   CASE WHEN GROUPING(v1) = 0 THEN v1 WHEN GROUPING(v2) = 0 THEN v2 ELSE '' END AS "value",
                   sum("n") AS "n"
              FROM (SELECT "t", v1, v2, sum("n")::int AS "n"
                      FROM (SELECT tenant_id::uuid AS "t", webhook_id::text AS v1, webhook_status::text AS v2, 1 AS "n" FROM new_rows
                            UNION ALL
                            SELECT tenant_id::uuid AS "t", webhook_id::text AS v1, webhook_status::text AS v2, -1 AS "n" FROM old_rows) AS u
                     GROUP BY "t", v1, v2 HAVING sum("n") <> 0) AS r
             GROUP BY GROUPING SETS (("t"), ("t", v1), ("t", v2))
        ) AS g
         WHERE "value" IS NOT NULL AND "n" <> 0
         ORDER BY 1, 3, 4
        ON CONFLICT ("tenant_id", "list", "dimension", "value") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
    ELSE
        INSERT INTO "list_counts" AS c ("tenant_id", "list", "dimension", "value", "count")
        SELECT "t", 'webhook-deliveries', "dimension", "value", "n" FROM (
            SELECT "t",
                   CASE WHEN GROUPING(v1) = 0 THEN 'webhook_id' WHEN GROUPING(v2) = 0 THEN 'webhook_status' ELSE 'all' END AS "dimension",
                   CASE WHEN GROUPING(v1) = 0 THEN v1 WHEN GROUPING(v2) = 0 THEN v2 ELSE '' END AS "value",
                   sum("n") AS "n"
              FROM (SELECT tenant_id::uuid AS "t", webhook_id::text AS v1, webhook_status::text AS v2, -1 AS "n" FROM old_rows) AS r
             GROUP BY GROUPING SETS (("t"), ("t", v1), ("t", v2))
        ) AS g
         WHERE "value" IS NOT NULL AND "n" <> 0
         ORDER BY 1, 3, 4
        ON CONFLICT ("tenant_id", "list", "dimension", "value") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER "events_counts_insert" AFTER INSERT ON "events" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "events_list_counts"();
CREATE OR REPLACE TRIGGER "events_counts_update" AFTER UPDATE ON "events" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "events_list_counts"();
CREATE OR REPLACE TRIGGER "events_counts_delete" AFTER DELETE ON "events" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "events_list_counts"();

CREATE OR REPLACE TRIGGER "webhook_deliveries_counts_insert" AFTER INSERT ON "webhook_deliveries" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "webhook_deliveries_list_counts"();
CREATE OR REPLACE TRIGGER "webhook_deliveries_counts_update" AFTER UPDATE ON "webhook_deliveries" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "webhook_deliveries_list_counts"();
CREATE OR REPLACE TRIGGER "webhook_deliveries_counts_delete" AFTER DELETE ON "webhook_deliveries" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "webhook_deliveries_list_counts"();
