-- Reference copy: migration 0001 holds these statements as it ran them. Changing this file
-- changes no database; a change to the search structures is a new migration.
-- Full-text index over title, abstract and method names (SQLite FTS5).
-- External content: the text lives in `papers`; triggers keep the index in step with it,
-- inside the same transaction as the change.
CREATE VIRTUAL TABLE papers_fts USING fts5(
    title, abstract, method_names,
    content='papers', content_rowid='pk',
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER papers_fts_insert AFTER INSERT ON papers BEGIN
    INSERT INTO papers_fts(rowid, title, abstract, method_names)
    VALUES (new.pk, new.title, new.abstract, new.method_names);
END;

CREATE TRIGGER papers_fts_delete AFTER DELETE ON papers BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, abstract, method_names)
    VALUES ('delete', old.pk, old.title, old.abstract, old.method_names);
END;

CREATE TRIGGER papers_fts_update AFTER UPDATE OF title, abstract, method_names ON papers BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, abstract, method_names)
    VALUES ('delete', old.pk, old.title, old.abstract, old.method_names);
    INSERT INTO papers_fts(rowid, title, abstract, method_names)
    VALUES (new.pk, new.title, new.abstract, new.method_names);
END;
