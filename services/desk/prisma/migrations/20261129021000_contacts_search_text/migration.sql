-- GET /contacts?q=: a contact's name and every address of it in one column, indexed by trigrams
-- (pg_trgm) beside the tenant (btree_gin). One table and one condition let the planner choose
-- between walking the newest contacts (a q most contacts match) and the index (a q few match).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

ALTER TABLE "contacts" ADD COLUMN "search_text" TEXT NOT NULL DEFAULT '';

-- The name, then the addresses (the primary one when none is stored yet: it is inserted first).
CREATE FUNCTION "contact_search_text"(contact_id UUID, name TEXT, primary_email TEXT) RETURNS TEXT
LANGUAGE sql STABLE AS $$
    SELECT name || ' ' || coalesce((SELECT string_agg(e.email::text, ' ' ORDER BY e.email) FROM contact_emails e WHERE e.contact_id = $1), primary_email)
$$;

CREATE FUNCTION "contacts_search_text_of_row"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_text := contact_search_text(NEW.id, NEW.name, NEW.email::text);
    RETURN NEW;
END
$$;

CREATE FUNCTION "contacts_search_text_of_emails"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE contacts c SET search_text = contact_search_text(c.id, c.name, c.email::text)
     WHERE c.id IN (SELECT contact_id FROM changed_rows);
    RETURN NULL;
END
$$;

CREATE TRIGGER "contacts_search_text" BEFORE INSERT OR UPDATE OF "name", "email" ON "contacts"
    FOR EACH ROW EXECUTE FUNCTION contacts_search_text_of_row();
CREATE TRIGGER "contact_emails_search_text_insert" AFTER INSERT ON "contact_emails" REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION contacts_search_text_of_emails();
CREATE TRIGGER "contact_emails_search_text_delete" AFTER DELETE ON "contact_emails" REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION contacts_search_text_of_emails();

UPDATE "contacts" SET "search_text" = contact_search_text("id", "name", "email"::text);

CREATE INDEX "contacts_search_text_idx" ON "contacts" USING GIN ("tenant_id" uuid_ops, "search_text" gin_trgm_ops);
