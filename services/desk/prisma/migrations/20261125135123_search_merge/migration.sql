-- Issue #22, points 4 and 6: full-text search over tickets and their comments; merged tickets.

-- AlterTable
ALTER TABLE "tickets" ADD COLUMN     "merged_into_id" UUID,
ADD COLUMN     "merged_ids" UUID[] DEFAULT ARRAY[]::UUID[],
ADD COLUMN     "search_vector" tsvector;

-- AlterTable
ALTER TABLE "ticket_comments" ADD COLUMN     "merged_from_ticket_id" UUID;

-- What `GET /tickets?q=` searches: the title (weight A), the description (B) and the bodies of all
-- the ticket's comments, internal ones too (C), each as German and English stems plus the words
-- as written (`simple`, which also serves prefixes of unstemmed words and umlauts as typed).
CREATE FUNCTION "ticket_search_document"(title TEXT, description TEXT, comments TEXT) RETURNS tsvector LANGUAGE sql STABLE AS $$
    SELECT setweight(to_tsvector('german', title) || to_tsvector('english', title) || to_tsvector('simple', title), 'A')
        || setweight(to_tsvector('german', description) || to_tsvector('english', description) || to_tsvector('simple', description), 'B')
        || setweight(to_tsvector('german', coalesce(comments, '')) || to_tsvector('english', coalesce(comments, '')) || to_tsvector('simple', coalesce(comments, '')), 'C')
$$;

CREATE FUNCTION "ticket_comments_text"(ticket UUID) RETURNS TEXT LANGUAGE sql STABLE AS $$
    SELECT string_agg("body", E'\n' ORDER BY "created_at", "id") FROM "ticket_comments" WHERE "ticket_id" = ticket
$$;

-- Triggers keep search_vector current in the transaction of every write that changes what it is
-- made of, whichever code path writes (the one-statement POST /tickets, Prisma's updates, merges):
-- no write can forget it, and a search never sees a ticket's text without its vector.
CREATE FUNCTION "tickets_search_vector"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW."search_vector" := "ticket_search_document"(NEW."title", NEW."description",
        CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE "ticket_comments_text"(NEW."id") END);
    RETURN NEW;
END $$;

CREATE TRIGGER "tickets_search_vector" BEFORE INSERT OR UPDATE OF "title", "description" ON "tickets"
    FOR EACH ROW EXECUTE FUNCTION "tickets_search_vector"();

CREATE FUNCTION "ticket_comments_search_vector"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "tickets" SET "search_vector" = "ticket_search_document"("title", "description", "ticket_comments_text"("id"))
    WHERE "id" IN (
        CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE NEW."ticket_id" END,
        CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE OLD."ticket_id" END);
    RETURN NULL;
END $$;

CREATE TRIGGER "ticket_comments_search_vector" AFTER INSERT OR DELETE OR UPDATE OF "body", "ticket_id" ON "ticket_comments"
    FOR EACH ROW EXECUTE FUNCTION "ticket_comments_search_vector"();

UPDATE "tickets" SET "search_vector" = "ticket_search_document"("title", "description", "ticket_comments_text"("id"));

-- CreateIndex
CREATE INDEX "tickets_search_vector_idx" ON "tickets" USING GIN ("search_vector");
