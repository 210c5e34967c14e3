-- GET /contacts?q=: words in place of trigrams. A trigram shared by every address ('@cl', '.ex')
-- has a posting list as long as the table, and the planner cannot tell a frequent q from a rare
-- one by trigrams. A contact's words (its name's, and for each address the address, its local
-- part, its domain and their pieces) in a tsvector give each word its own posting list and give
-- ANALYZE their frequencies (most_common_elems): the planner walks the tenant's newest contacts for
-- a word many contacts have and reads the index for a rare word or an address. The GIN holds the
-- words only: beside the tenant, every lookup would also read the tenant's posting list.

-- The lexemes, lower-case and taken as they are (array_to_tsvector: no parser, which would split
-- or keep an address by its own rules): every whitespace-separated word of the name and its pieces
-- between punctuation; each address whole, its local part, its domain and the pieces of the address
-- between punctuation (the local part split at . - _ +, the domain's labels).
CREATE FUNCTION "contact_search_words"(name TEXT, emails TEXT[]) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_to_tsvector(coalesce(array_agg(DISTINCT word), '{}'))
      FROM (SELECT unnest(ARRAY[w] || regexp_split_to_array(w, '[^[:alnum:]]+')) AS word
              FROM regexp_split_to_table(lower(name), '\s+') AS w
            UNION ALL
            SELECT unnest(ARRAY[a, substring(a FROM '^(.*)@'), substring(a FROM '@([^@]*)$')] || regexp_split_to_array(a, '[^[:alnum:]]+'))
              FROM unnest(emails) AS e, lower(e) AS a) AS words
     WHERE word <> ''
$$;

-- The name and the addresses (the primary one when none is stored yet: it is inserted first).
CREATE FUNCTION "contact_search_words_of"(contact_id UUID, name TEXT, primary_email TEXT) RETURNS tsvector
LANGUAGE sql STABLE AS $$
    SELECT contact_search_words(name, coalesce((SELECT array_agg(e.email::text) FROM contact_emails e WHERE e.contact_id = $1), ARRAY[primary_email]))
$$;

CREATE FUNCTION "contacts_search_words_of_row"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_words := contact_search_words_of(NEW.id, NEW.name, NEW.email::text);
    RETURN NEW;
END
$$;

CREATE FUNCTION "contacts_search_words_of_emails"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE contacts c SET search_words = contact_search_words_of(c.id, c.name, c.email::text)
     WHERE c.id IN (SELECT contact_id FROM changed_rows);
    RETURN NULL;
END
$$;

DROP TRIGGER "contacts_search_text" ON "contacts";
DROP TRIGGER "contact_emails_search_text_insert" ON "contact_emails";
DROP TRIGGER "contact_emails_search_text_delete" ON "contact_emails";
DROP FUNCTION "contacts_search_text_of_row"();
DROP FUNCTION "contacts_search_text_of_emails"();
DROP FUNCTION "contact_search_text"(UUID, TEXT, TEXT);
DROP INDEX "contacts_search_text_idx";
ALTER TABLE "contacts" DROP COLUMN "search_text";

ALTER TABLE "contacts" ADD COLUMN "search_words" tsvector NOT NULL DEFAULT ''::tsvector;

CREATE TRIGGER "contacts_search_words" BEFORE INSERT OR UPDATE OF "name", "email" ON "contacts"
    FOR EACH ROW EXECUTE FUNCTION contacts_search_words_of_row();
CREATE TRIGGER "contact_emails_search_words_insert" AFTER INSERT ON "contact_emails" REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION contacts_search_words_of_emails();
CREATE TRIGGER "contact_emails_search_words_delete" AFTER DELETE ON "contact_emails" REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION contacts_search_words_of_emails();

UPDATE "contacts" SET "search_words" = contact_search_words_of("id", "name", "email"::text);

CREATE INDEX "contacts_search_words_idx" ON "contacts" USING GIN ("search_words");
