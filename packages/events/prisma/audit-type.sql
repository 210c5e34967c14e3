-- @msp/events: the audit log filtered by event type (`GET /audit-events?type=ticket.updated,...`).
-- Each service's migration <timestamp>_events_audit_type holds this text word for word (the
-- package's schema-copies test checks it).

-- One index per filter serving ORDER BY occurred_at DESC, seq DESC LIMIT: a type's page (each type
-- of several is its own ordered index scan, merged) stops at its LIMIT at any size.
CREATE INDEX "events_tenant_id_type_occurred_at_seq_idx" ON "events"("tenant_id", "type", "occurred_at" DESC, "seq" DESC);

-- The type's total from list_counts: the events' counters gain the dimension `type`. The
-- triggers are replaced in this transaction, which holds the table's lock until the backfill
-- below has counted what the table holds: no event is counted twice or missed.
DROP TRIGGER "events_counts_insert" ON "events";
DROP TRIGGER "events_counts_update" ON "events";
DROP TRIGGER "events_counts_delete" ON "events";
CREATE TRIGGER "events_counts_insert" AFTER INSERT ON "events" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('audit-events', 'tenant_id', 'resource_type', 'actor_client_id', 'actor_for', 'occurred_day', 'occurred_hour', 'type');
CREATE TRIGGER "events_counts_update" AFTER UPDATE ON "events" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('audit-events', 'tenant_id', 'resource_type', 'actor_client_id', 'actor_for', 'occurred_day', 'occurred_hour', 'type');
CREATE TRIGGER "events_counts_delete" AFTER DELETE ON "events" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('audit-events', 'tenant_id', 'resource_type', 'actor_client_id', 'actor_for', 'occurred_day', 'occurred_hour', 'type');

-- The backfill: the events there are, by tenant and type.
INSERT INTO "list_counts" ("tenant_id", "list", "dimension", "value", "count")
SELECT "tenant_id", 'audit-events', 'type', "type", count(*) FROM "events" GROUP BY "tenant_id", "type";
