-- Reference copy: migration 0001 holds these statements as it ran them. Changing this file
-- changes no database; a change to the search structures is a new migration.
-- Full-text search on PostgreSQL: a weighted tsvector (title and method names above the
-- abstract), generated from the row so it can never drift from it, with a GIN index.
ALTER TABLE papers ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce(title, '')), 'A')
    || setweight(to_tsvector('english', coalesce(method_names, '')), 'A')
    || setweight(to_tsvector('english', coalesce(abstract, '')), 'B')
) STORED;

CREATE INDEX ix_papers_search_vector ON papers USING gin (search_vector);
