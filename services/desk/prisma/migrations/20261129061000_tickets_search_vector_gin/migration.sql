-- `GET /tickets?q=`: the words alone in the GIN index, the tenant checked on the rows. With the
-- tenant in the index, a word's posting list still held every tenant's tickets, so a small tenant
-- beside a large one read the large one's matches, and a large tenant read its whole tenant_id
-- list besides. Alone, the index is the words' own, and PostgreSQL's tsvector statistics choose:
-- a word many tickets have walks the tenant's newest tickets (tenant_id, created_at, id) until the
-- search's window is full; a rare one is looked up here. btree_gin stays: contacts' index uses it.
CREATE INDEX "tickets_search_vector_idx" ON "tickets" USING GIN ("search_vector");
DROP INDEX "tickets_tenant_id_search_vector_idx";
