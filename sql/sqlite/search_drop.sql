-- Reference copy: migration 0001 holds these statements as it ran them. Changing this file
-- changes no database; a change to the search structures is a new migration.
DROP TRIGGER IF EXISTS papers_fts_update;
DROP TRIGGER IF EXISTS papers_fts_delete;
DROP TRIGGER IF EXISTS papers_fts_insert;
DROP TABLE IF EXISTS papers_fts;
