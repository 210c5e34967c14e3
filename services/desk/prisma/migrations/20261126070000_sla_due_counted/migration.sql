-- Which clocks ticket_sla_due_counts counts was written out in seven places by the migration before
-- (20261126030000_sla_due_counts: the trigger four times, ticket_sla_due_count twice, the backfill
-- once), and again by the recounts that check it. It is one function now, and the trigger's three
-- branches share one netting upsert. Nothing counted changes: the counters stay as they are.

-- Whether a clock is one the partial index ticket_slas_tenant_id_next_due_at_idx holds (no target
-- breached by a stored fact, one running), word for word its predicate. A plain SQL expression, so
-- PostgreSQL inlines it where it is called: a query over ticket_slas that calls it still reads that
-- partial index (the inlined text implies the index's predicate). The index itself keeps the literal
-- text, as does desk's tickets list (ticket-slas.repository's UNBREACHED_BY_RECORD).
CREATE FUNCTION "ticket_sla_due_counted"(s "ticket_slas") RETURNS BOOLEAN
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN s.first_response_breached_at IS NULL AND s.resolution_breached_at IS NULL
   AND (s.first_response_completed_at IS NULL OR s.first_response_completed_at <= s.first_response_due_at)
   AND (s.resolution_stopped_at IS NULL OR s.resolution_stopped_at <= s.resolution_due_at)
   AND s.next_due_at IS NOT NULL;

-- A statement's changes to ticket_slas: its new rows' counted clocks +1 per bucket, its old rows'
-- -1 (only the transition tables the statement has: INSERT new, DELETE old, UPDATE both), netted
-- by tenant and bucket (an UPDATE that moves no clock in or out of a bucket writes nothing),
-- upserted in key order (concurrent writers lock the counter rows in one order and cannot deadlock
-- on them), in the writing transaction. A bucket that reaches 0 is deleted.
CREATE OR REPLACE FUNCTION "ticket_sla_due_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changes "ticket_sla_due_counts"[] := '{}';
    netted "ticket_sla_due_counts"[];
BEGIN
    IF TG_OP <> 'DELETE' THEN
        changes := changes || ARRAY(
            SELECT ROW(r.tenant_id, "ticket_sla_due_bucket"(r.next_due_at), count(*))::"ticket_sla_due_counts"
              FROM new_rows r WHERE "ticket_sla_due_counted"(r) GROUP BY r.tenant_id, "ticket_sla_due_bucket"(r.next_due_at));
    END IF;
    IF TG_OP <> 'INSERT' THEN
        changes := changes || ARRAY(
            SELECT ROW(r.tenant_id, "ticket_sla_due_bucket"(r.next_due_at), -count(*))::"ticket_sla_due_counts"
              FROM old_rows r WHERE "ticket_sla_due_counted"(r) GROUP BY r.tenant_id, "ticket_sla_due_bucket"(r.next_due_at));
    END IF;
    netted := ARRAY(
        SELECT ROW(c.tenant_id, c.bucket, sum(c.count))::"ticket_sla_due_counts"
          FROM unnest(changes) c GROUP BY c.tenant_id, c.bucket HAVING sum(c.count) <> 0 ORDER BY c.tenant_id, c.bucket);
    IF cardinality(netted) = 0 THEN
        RETURN NULL;
    END IF;
    INSERT INTO "ticket_sla_due_counts" AS c ("tenant_id", "bucket", "count")
    SELECT k.tenant_id, k.bucket, k.count FROM unnest(netted) k ORDER BY 1, 2
        ON CONFLICT ("tenant_id", "bucket") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM "ticket_sla_due_counts" c USING unnest(netted) k
         WHERE c.tenant_id = k.tenant_id AND c.bucket = k.bucket AND c.count = 0;
    END IF;
    RETURN NULL;
END $$;

-- How many of the tenant's clocks the partial index holds with next_due_at in [lo, hi] (hi NULL:
-- no upper end): as before, with the predicate called, not written out. The two edge scans still
-- read the partial index (see ticket_sla_due_counted).
CREATE OR REPLACE FUNCTION "ticket_sla_due_count"(tenant UUID, lo TIMESTAMPTZ, hi TIMESTAMPTZ) RETURNS BIGINT
LANGUAGE plpgsql STABLE AS $$
DECLARE
    -- The first bucket that starts at or after lo, and the bucket hi falls in.
    first_full TIMESTAMPTZ := CASE WHEN "ticket_sla_due_bucket"(lo) = lo THEN lo ELSE "ticket_sla_due_bucket"(lo) + interval '10 seconds' END;
    last_part TIMESTAMPTZ := "ticket_sla_due_bucket"(hi);
    whole BIGINT;
    edges BIGINT := 0;
BEGIN
    IF hi IS NOT NULL AND hi < lo THEN
        RETURN 0;
    END IF;
    IF hi IS NOT NULL AND last_part < first_full THEN
        -- lo and hi in one bucket: no whole bucket; the range itself, [lo, hi], is the upper end.
        first_full := lo;
        last_part := lo;
    END IF;
    IF hi IS NULL THEN
        SELECT coalesce(sum(c.count), 0) INTO whole FROM "ticket_sla_due_counts" c WHERE c.tenant_id = tenant AND c.bucket >= first_full;
    ELSE
        SELECT coalesce(sum(c.count), 0) INTO whole FROM "ticket_sla_due_counts" c WHERE c.tenant_id = tenant AND c.bucket >= first_full AND c.bucket < last_part;
        -- The partial bucket at the upper end, [last_part, hi].
        SELECT count(*) INTO edges FROM "ticket_slas" s
         WHERE s.tenant_id = tenant AND "ticket_sla_due_counted"(s) AND s.next_due_at >= last_part AND s.next_due_at <= hi;
    END IF;
    -- The partial bucket at the lower end, [lo, first_full).
    SELECT edges + count(*) INTO edges FROM "ticket_slas" s
     WHERE s.tenant_id = tenant AND "ticket_sla_due_counted"(s) AND s.next_due_at >= lo AND s.next_due_at < first_full;
    RETURN whole + edges;
END $$;
