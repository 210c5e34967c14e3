-- Issue #25, point 1: `GET /tickets?sla_status=at_risk` (and `running`) answer an exact total that
-- does not grow with the tenant's backlog. Counting the partial index ticket_slas_tenant_id_next_due_at_idx
-- over [now, now + at_risk_minutes] read every clock due in that window (50,004 at 1M tickets,
-- 504 at 10k: ×0.46 req/s). "At risk" moves with the clock, so no counter can hold it; what can is
-- how many clocks fall due in each 10-second bucket. A total is then the buckets wholly inside the
-- window, summed, and the two partial buckets at its ends read off the index (at most 10 s of due
-- times each): one statement, one snapshot, exact.

-- The clocks that the partial index holds (no target breached by a stored fact, one running), by
-- tenant and the 10-second bucket of next_due_at. A bucket whose count reaches 0 is deleted, so the
-- table holds only buckets of clocks still counted.
CREATE TABLE "ticket_sla_due_counts" (
    "tenant_id" UUID NOT NULL,
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "ticket_sla_due_counts_pkey" PRIMARY KEY ("tenant_id","bucket")
);

-- The bucket of a due time: 10-second steps from a fixed origin (date_bin is immutable: it does not
-- read the session's time zone).
CREATE FUNCTION "ticket_sla_due_bucket"(at TIMESTAMPTZ) RETURNS TIMESTAMPTZ
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN date_bin('10 seconds', at, TIMESTAMPTZ '2000-01-01 00:00:00+00');

-- A statement's changes to ticket_slas, netted by tenant and bucket (an UPDATE's old rows count -1,
-- its new rows +1, so an update that moves no clock in or out of a bucket writes nothing), upserted
-- in key order (concurrent writers lock the counter rows in one order and cannot deadlock on them),
-- in the writing transaction (a rejected request leaves them as they were). The predicate is the
-- partial index's, word for word.
CREATE FUNCTION "ticket_sla_due_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tenants UUID[];
    buckets TIMESTAMPTZ[];
    deltas BIGINT[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(c.tenant_id ORDER BY c.tenant_id, c.bucket), array_agg(c.bucket ORDER BY c.tenant_id, c.bucket), array_agg(c.n ORDER BY c.tenant_id, c.bucket)
          INTO tenants, buckets, deltas
          FROM (SELECT r.tenant_id, "ticket_sla_due_bucket"(r.next_due_at) AS bucket, count(*) AS n
                  FROM new_rows r
                 WHERE r.first_response_breached_at IS NULL AND r.resolution_breached_at IS NULL
                   AND (r.first_response_completed_at IS NULL OR r.first_response_completed_at <= r.first_response_due_at)
                   AND (r.resolution_stopped_at IS NULL OR r.resolution_stopped_at <= r.resolution_due_at)
                   AND r.next_due_at IS NOT NULL
                 GROUP BY 1, 2) c;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(c.tenant_id ORDER BY c.tenant_id, c.bucket), array_agg(c.bucket ORDER BY c.tenant_id, c.bucket), array_agg(c.n ORDER BY c.tenant_id, c.bucket)
          INTO tenants, buckets, deltas
          FROM (SELECT r.tenant_id, "ticket_sla_due_bucket"(r.next_due_at) AS bucket, -count(*) AS n
                  FROM old_rows r
                 WHERE r.first_response_breached_at IS NULL AND r.resolution_breached_at IS NULL
                   AND (r.first_response_completed_at IS NULL OR r.first_response_completed_at <= r.first_response_due_at)
                   AND (r.resolution_stopped_at IS NULL OR r.resolution_stopped_at <= r.resolution_due_at)
                   AND r.next_due_at IS NOT NULL
                 GROUP BY 1, 2) c;
    ELSE
        SELECT array_agg(c.tenant_id ORDER BY c.tenant_id, c.bucket), array_agg(c.bucket ORDER BY c.tenant_id, c.bucket), array_agg(c.n ORDER BY c.tenant_id, c.bucket)
          INTO tenants, buckets, deltas
          FROM (SELECT u.tenant_id, u.bucket, sum(u.n)::bigint AS n
                  FROM (SELECT r.tenant_id, "ticket_sla_due_bucket"(r.next_due_at) AS bucket, 1 AS n
                          FROM new_rows r
                         WHERE r.first_response_breached_at IS NULL AND r.resolution_breached_at IS NULL
                           AND (r.first_response_completed_at IS NULL OR r.first_response_completed_at <= r.first_response_due_at)
                           AND (r.resolution_stopped_at IS NULL OR r.resolution_stopped_at <= r.resolution_due_at)
                           AND r.next_due_at IS NOT NULL
                        UNION ALL
                        SELECT r.tenant_id, "ticket_sla_due_bucket"(r.next_due_at), -1
                          FROM old_rows r
                         WHERE r.first_response_breached_at IS NULL AND r.resolution_breached_at IS NULL
                           AND (r.first_response_completed_at IS NULL OR r.first_response_completed_at <= r.first_response_due_at)
                           AND (r.resolution_stopped_at IS NULL OR r.resolution_stopped_at <= r.resolution_due_at)
                           AND r.next_due_at IS NOT NULL) u
                 GROUP BY 1, 2
                HAVING sum(u.n) <> 0) c;
    END IF;
    IF tenants IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO "ticket_sla_due_counts" AS c ("tenant_id", "bucket", "count")
    SELECT k.t, k.b, k.n FROM unnest(tenants, buckets, deltas) AS k(t, b, n) ORDER BY 1, 2
        ON CONFLICT ("tenant_id", "bucket") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM "ticket_sla_due_counts" c USING unnest(tenants, buckets) AS k(t, b)
         WHERE c.tenant_id = k.t AND c.bucket = k.b AND c.count = 0;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER "ticket_slas_due_count_insert" AFTER INSERT ON "ticket_slas"
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "ticket_sla_due_counts_apply"();
-- (A trigger with transition tables cannot name its columns: an UPDATE that moves no clock nets to
-- nothing and writes no counter.)
CREATE TRIGGER "ticket_slas_due_count_update" AFTER UPDATE ON "ticket_slas"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "ticket_sla_due_counts_apply"();
CREATE TRIGGER "ticket_slas_due_count_delete" AFTER DELETE ON "ticket_slas"
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "ticket_sla_due_counts_apply"();

-- How many of the tenant's clocks the partial index holds with next_due_at in [lo, hi] (hi NULL:
-- no upper end): `sla_status=at_risk` is [now, now + at_risk_minutes], `running` [now, ∞). The
-- buckets wholly inside the range are summed from ticket_sla_due_counts; the rest, the partial
-- buckets at its ends (at most 10 s of due times each, whatever the backlog), are counted off the
-- partial index. plpgsql, so that its statements' plans are cached per session.
CREATE FUNCTION "ticket_sla_due_count"(tenant UUID, lo TIMESTAMPTZ, hi TIMESTAMPTZ) RETURNS BIGINT
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
         WHERE s.tenant_id = tenant
           AND s.first_response_breached_at IS NULL AND s.resolution_breached_at IS NULL
           AND (s.first_response_completed_at IS NULL OR s.first_response_completed_at <= s.first_response_due_at)
           AND (s.resolution_stopped_at IS NULL OR s.resolution_stopped_at <= s.resolution_due_at)
           AND s.next_due_at IS NOT NULL
           AND s.next_due_at >= last_part AND s.next_due_at <= hi;
    END IF;
    -- The partial bucket at the lower end, [lo, first_full).
    SELECT edges + count(*) INTO edges FROM "ticket_slas" s
     WHERE s.tenant_id = tenant
       AND s.first_response_breached_at IS NULL AND s.resolution_breached_at IS NULL
       AND (s.first_response_completed_at IS NULL OR s.first_response_completed_at <= s.first_response_due_at)
       AND (s.resolution_stopped_at IS NULL OR s.resolution_stopped_at <= s.resolution_due_at)
       AND s.next_due_at IS NOT NULL
       AND s.next_due_at >= lo AND s.next_due_at < first_full;
    RETURN whole + edges;
END $$;

-- The clocks there are now.
INSERT INTO "ticket_sla_due_counts" ("tenant_id", "bucket", "count")
SELECT s.tenant_id, "ticket_sla_due_bucket"(s.next_due_at), count(*)
  FROM "ticket_slas" s
 WHERE s.first_response_breached_at IS NULL AND s.resolution_breached_at IS NULL
   AND (s.first_response_completed_at IS NULL OR s.first_response_completed_at <= s.first_response_due_at)
   AND (s.resolution_stopped_at IS NULL OR s.resolution_stopped_at <= s.resolution_due_at)
   AND s.next_due_at IS NOT NULL
 GROUP BY 1, 2;
