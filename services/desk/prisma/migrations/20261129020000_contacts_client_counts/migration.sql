-- GET /contacts?client_id=…'s total from a counter per client, as the time entries keep theirs:
-- counting a client's contacts row by row grows with the client.
DROP TRIGGER "contacts_counts_insert" ON "contacts";
DROP TRIGGER "contacts_counts_update" ON "contacts";
DROP TRIGGER "contacts_counts_delete" ON "contacts";
CREATE TRIGGER "contacts_counts_insert" AFTER INSERT ON "contacts" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('contacts', 'tenant_id', 'client_id');
CREATE TRIGGER "contacts_counts_update" AFTER UPDATE ON "contacts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('contacts', 'tenant_id', 'client_id');
CREATE TRIGGER "contacts_counts_delete" AFTER DELETE ON "contacts" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('contacts', 'tenant_id', 'client_id');

INSERT INTO "list_counts" ("tenant_id", "list", "dimension", "value", "count")
SELECT "tenant_id", 'contacts', 'client_id', "client_id"::text, count(*) FROM "contacts" WHERE "client_id" IS NOT NULL GROUP BY 1, 4
ON CONFLICT ("tenant_id", "list", "dimension", "value") DO UPDATE SET "count" = EXCLUDED."count";
