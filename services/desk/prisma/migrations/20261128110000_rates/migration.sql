-- Rates to invoice with: a client's hourly rate and currency, a time entry's rate (the client's
-- when it was recorded, unless the entry names its own) and amount, in minor units (cents), never
-- a float. An amount is minutes × hourly_rate / 60 rounded half up to the minor unit.

-- AlterTable
ALTER TABLE "clients" ADD COLUMN     "currency" TEXT NOT NULL DEFAULT 'EUR',
ADD COLUMN     "hourly_rate" INTEGER;

-- AlterTable
ALTER TABLE "time_entries" ADD COLUMN     "currency" TEXT NOT NULL DEFAULT 'EUR',
ADD COLUMN     "hourly_rate" INTEGER;

-- CreateTable
CREATE TABLE "time_entry_amounts" (
    "tenant_id" UUID NOT NULL,
    "dimension" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "billable_amount" BIGINT NOT NULL,

    CONSTRAINT "time_entry_amounts_pkey" PRIMARY KEY ("tenant_id","dimension","value","currency")
);

-- Minor units per hour, at most 10,000,000 (100,000.00 of a currency with two decimals): an amount
-- of a day's entry (1,440 minutes) stays far inside a bigint and inside a JSON number's integers.
-- A currency is three capital letters (ISO 4217; the API takes only the codes the standard lists).
ALTER TABLE "clients" ADD CONSTRAINT "clients_hourly_rate_check" CHECK ("hourly_rate" BETWEEN 0 AND 10000000);
ALTER TABLE "clients" ADD CONSTRAINT "clients_currency_check" CHECK ("currency" ~ '^[A-Z]{3}$');
ALTER TABLE "time_entries" ADD CONSTRAINT "time_entries_hourly_rate_check" CHECK ("hourly_rate" BETWEEN 0 AND 10000000);
ALTER TABLE "time_entries" ADD CONSTRAINT "time_entries_currency_check" CHECK ("currency" ~ '^[A-Z]{3}$');

-- An entry's amount in minor units: minutes × rate / 60, rounded half up (both are never negative).
CREATE FUNCTION "time_entry_amount"(minutes INTEGER, hourly_rate INTEGER) RETURNS BIGINT
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (minutes::bigint * hourly_rate + 30) / 60;

-- GET /time-entries' `totals.amounts`: the amounts, and the billable amounts, of the priced entries
-- (a rate) of each filter's value, per currency, kept like time_entry_minutes (the same keys: 'all',
-- client_id, user_id, date, billable; statement triggers grouping a statement's rows once, upserts
-- in key order), in the writing transaction.
CREATE FUNCTION "time_entry_amounts_on_change"() RETURNS trigger LANGUAGE plpgsql SET work_mem = '64MB' AS $$
DECLARE
    columns CONSTANT TEXT := '"tenant_id" AS "t", "client_id"::text AS "c", "user_id"::text AS "u", to_jsonb("date") #>> ''{}'' AS "d", "billable"::text AS "b", "currency" AS "k"';
    changes TEXT;
BEGIN
    changes := CASE TG_OP
        WHEN 'INSERT' THEN format('SELECT %s, "time_entry_amount"("minutes", "hourly_rate") AS "a" FROM new_rows WHERE "hourly_rate" IS NOT NULL', columns)
        WHEN 'DELETE' THEN format('SELECT %s, -"time_entry_amount"("minutes", "hourly_rate") AS "a" FROM old_rows WHERE "hourly_rate" IS NOT NULL', columns)
        ELSE format('SELECT "t", "c", "u", "d", "b", "k", sum("a") AS "a"
                       FROM (SELECT %1$s, "time_entry_amount"("minutes", "hourly_rate") AS "a" FROM new_rows WHERE "hourly_rate" IS NOT NULL
                             UNION ALL
                             SELECT %1$s, -"time_entry_amount"("minutes", "hourly_rate") AS "a" FROM old_rows WHERE "hourly_rate" IS NOT NULL) AS u
                      GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum("a") <> 0', columns)
    END;
    EXECUTE format(
        'INSERT INTO "time_entry_amounts" AS m ("tenant_id", "dimension", "value", "currency", "amount", "billable_amount")
         SELECT "t", "dimension", "value", "k", "amount", "billable_amount" FROM (
             SELECT "t", "k",
                    CASE WHEN GROUPING("c") = 0 THEN ''client_id'' WHEN GROUPING("u") = 0 THEN ''user_id''
                         WHEN GROUPING("d") = 0 THEN ''date'' WHEN GROUPING("b") = 0 THEN ''billable'' ELSE ''all'' END AS "dimension",
                    CASE WHEN GROUPING("c") = 0 THEN "c" WHEN GROUPING("u") = 0 THEN "u"
                         WHEN GROUPING("d") = 0 THEN "d" WHEN GROUPING("b") = 0 THEN "b" ELSE '''' END AS "value",
                    sum("a") AS "amount", coalesce(sum("a") FILTER (WHERE "b" = ''true''), 0) AS "billable_amount"
               FROM (%s) AS r
              GROUP BY GROUPING SETS (("t", "k"), ("t", "k", "c"), ("t", "k", "u"), ("t", "k", "d"), ("t", "k", "b"))
         ) AS g
          WHERE "value" IS NOT NULL AND ("amount" <> 0 OR "billable_amount" <> 0)
          ORDER BY 1, 2, 3, 4
         ON CONFLICT ("tenant_id", "dimension", "value", "currency") DO UPDATE
             SET "amount" = m."amount" + EXCLUDED."amount", "billable_amount" = m."billable_amount" + EXCLUDED."billable_amount"',
        changes);
    RETURN NULL;
END $$;

CREATE TRIGGER "time_entries_amounts_insert" AFTER INSERT ON "time_entries" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "time_entry_amounts_on_change"();
CREATE TRIGGER "time_entries_amounts_update" AFTER UPDATE ON "time_entries" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "time_entry_amounts_on_change"();
CREATE TRIGGER "time_entries_amounts_delete" AFTER DELETE ON "time_entries" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "time_entry_amounts_on_change"();
