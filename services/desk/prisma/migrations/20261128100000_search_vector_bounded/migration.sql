-- A ticket's search_vector is bounded, so that a ticket takes comments for ever: it was rebuilt from
-- every comment of the ticket, and a tsvector holds at most 1 MB (PostgreSQL's 54000 "string is too
-- long for tsvector"): a thread of some 70 comments of 10,000 characters made every new comment,
-- change of title and merge of it fail. Now the vector holds the title, the description and the
-- newest comments up to 100,000 characters (with the same weights and dictionaries as before, so a
-- ticket whose comments stay below that is found exactly as before; the oldest comments of a longer
-- thread are no longer searched). Should even that exceed the limit (text of mostly unique words in
-- a many-byte script), fewer comments are taken, down to the title and description alone.
-- And the comments' trigger runs once per statement, rebuilding each ticket it touched once: a
-- merge moving a thread of n comments rebuilt both tickets n times.

-- The ticket's comments, newest first, while their text (and a line break each) stays within
-- `budget` characters, joined oldest first. Reads no more comments than it keeps, plus one.
CREATE FUNCTION "ticket_comments_text"(ticket UUID, budget INT) RETURNS TEXT LANGUAGE plpgsql STABLE AS $$
DECLARE
    comment RECORD;
    used INT := 0;
    bodies TEXT[] := ARRAY[]::TEXT[];
BEGIN
    FOR comment IN SELECT "body" FROM "ticket_comments" WHERE "ticket_id" = ticket ORDER BY "created_at" DESC, "id" DESC LOOP
        used := used + length(comment."body") + 1;
        EXIT WHEN used > budget;
        bodies := comment."body" || bodies;
    END LOOP;
    RETURN NULLIF(array_to_string(bodies, E'\n'), '');
END $$;

-- The ticket's search document within PostgreSQL's limit: the newest 100,000 characters of
-- comments, or a quarter of that as often as the vector would still be too long.
CREATE FUNCTION "ticket_search_vector"(ticket UUID, title TEXT, description TEXT, with_comments BOOLEAN) RETURNS tsvector LANGUAGE plpgsql STABLE AS $$
DECLARE
    budget INT := CASE WHEN with_comments THEN 100000 ELSE 0 END;
BEGIN
    LOOP
        BEGIN
            RETURN "ticket_search_document"(title, description, CASE WHEN budget > 0 THEN "ticket_comments_text"(ticket, budget) END);
        EXCEPTION WHEN program_limit_exceeded THEN
            IF budget = 0 THEN
                RAISE;
            END IF;
            budget := budget / 4;
        END;
    END LOOP;
END $$;

CREATE OR REPLACE FUNCTION "tickets_search_vector"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW."search_vector" := "ticket_search_vector"(NEW."id", NEW."title", NEW."description", TG_OP <> 'INSERT');
    RETURN NEW;
END $$;

-- Each ticket whose comments a statement inserted, deleted, moved or edited, once.
CREATE FUNCTION "ticket_comments_search_vectors"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE "tickets" t SET "search_vector" = "ticket_search_vector"(t."id", t."title", t."description", true)
         WHERE t."id" IN (SELECT DISTINCT n."ticket_id" FROM new_rows n);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE "tickets" t SET "search_vector" = "ticket_search_vector"(t."id", t."title", t."description", true)
         WHERE t."id" IN (SELECT DISTINCT o."ticket_id" FROM old_rows o);
    ELSE
        UPDATE "tickets" t SET "search_vector" = "ticket_search_vector"(t."id", t."title", t."description", true)
         WHERE t."id" IN (
            SELECT x."ticket_id" FROM (
                SELECT n."ticket_id" FROM new_rows n JOIN old_rows o ON o."id" = n."id"
                 WHERE n."ticket_id" IS DISTINCT FROM o."ticket_id" OR n."body" IS DISTINCT FROM o."body"
                UNION
                SELECT o."ticket_id" FROM new_rows n JOIN old_rows o ON o."id" = n."id"
                 WHERE n."ticket_id" IS DISTINCT FROM o."ticket_id" OR n."body" IS DISTINCT FROM o."body"
            ) x);
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER "ticket_comments_search_vector" ON "ticket_comments";
DROP FUNCTION "ticket_comments_search_vector"();
-- Transition tables cannot go with a column list (UPDATE OF body, ticket_id): the UPDATE trigger
-- sees every update and rebuilds only the tickets whose comments' body or ticket changed.
CREATE TRIGGER "ticket_comments_search_vectors_insert" AFTER INSERT ON "ticket_comments"
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "ticket_comments_search_vectors"();
CREATE TRIGGER "ticket_comments_search_vectors_update" AFTER UPDATE ON "ticket_comments"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "ticket_comments_search_vectors"();
CREATE TRIGGER "ticket_comments_search_vectors_delete" AFTER DELETE ON "ticket_comments"
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "ticket_comments_search_vectors"();

-- The one-argument ticket_comments_text of before is used by nothing now.
DROP FUNCTION "ticket_comments_text"(UUID);
