-- Ranked full-text search (FTS5 bm25: title and method names weigh more than the abstract),
-- with a highlighted snippet from the best-matching column.
SELECT
    p.id AS paper_id,
    p.venue,
    p.year,
    p.title,
    snippet(papers_fts, -1, '**', '**', '…', 24) AS snippet,
    round(-bm25(papers_fts, 10.0, 1.0, 5.0), 4) AS score
FROM papers_fts
JOIN papers AS p ON p.pk = papers_fts.rowid
WHERE papers_fts MATCH :query
ORDER BY bm25(papers_fts, 10.0, 1.0, 5.0), p.id
LIMIT :limit
