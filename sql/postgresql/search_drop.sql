-- Reference copy: migration 0001 holds these statements as it ran them. Changing this file
-- changes no database; a change to the search structures is a new migration.
DROP INDEX IF EXISTS ix_papers_search_vector;
ALTER TABLE papers DROP COLUMN IF EXISTS search_vector;
