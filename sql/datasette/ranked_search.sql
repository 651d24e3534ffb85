-- Ranked search with snippets
-- Words are ANDed, "quoted phrases" match exactly, OR between words, -word excludes (as etl search); best match first.
SELECT
    lbl.label,
    p.venue,
    p.year,
    snippet(papers_fts, -1, '**', '**', '…', 24) AS snippet,
    round(-bm25(papers_fts, 10.0, 1.0, 5.0), 4) AS score,
    p.id AS paper_id
FROM papers_fts
JOIN papers AS p ON p.pk = papers_fts.rowid
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk
WHERE papers_fts MATCH etl_fts_query(:search)
ORDER BY bm25(papers_fts, 10.0, 1.0, 5.0), p.pk
LIMIT 50
