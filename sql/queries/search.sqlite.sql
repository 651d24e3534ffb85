-- Ranked full-text search (FTS5 bm25: title and method names weigh more than the abstract),
-- with a highlighted snippet from the best-matching column. The top rows are ranked first;
-- snippets are then made for those rows only (MATCH with `rowid IN`, which FTS5 serves
-- directly; a join on rowid would run the full-text query again).
WITH top AS (
    SELECT rowid, bm25(papers_fts, 10.0, 1.0, 5.0) AS rank
    FROM papers_fts
    WHERE papers_fts MATCH :query
    ORDER BY rank, rowid
    LIMIT :limit
),
snippets AS (
    SELECT rowid, snippet(papers_fts, -1, '**', '**', '…', 24) AS snippet
    FROM papers_fts
    WHERE papers_fts MATCH :query AND rowid IN (SELECT rowid FROM top)
)
SELECT
    p.id AS paper_id,
    p.venue,
    p.year,
    p.title,
    snippets.snippet,
    round(-top.rank, 4) AS score,
    lbl.label
FROM top
JOIN snippets ON snippets.rowid = top.rowid
JOIN papers AS p ON p.pk = top.rowid
JOIN paper_labels AS lbl ON lbl.paper_pk = top.rowid
ORDER BY top.rank, top.rowid
