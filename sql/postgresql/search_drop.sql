DROP INDEX IF EXISTS ix_papers_search_vector;
ALTER TABLE papers DROP COLUMN IF EXISTS search_vector;
