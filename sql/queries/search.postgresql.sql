-- Ranked full-text search (weighted tsvector: title and method names above the abstract),
-- with a highlighted snippet. :query is a tsquery's text, made by etl/query_language.py from the
-- user's terms bound as parameters. The ranking sorts narrow rows (row number and rank); the wide
-- columns are read, and ts_headline run, for the top rows only.
WITH q AS (SELECT CAST(:query AS tsquery) AS query),
top AS (
    SELECT p.pk, ts_rank(p.search_vector, q.query) AS rank
    FROM papers AS p, q
    WHERE p.search_vector @@ q.query
    ORDER BY rank DESC, p.pk
    LIMIT :limit
)
SELECT
    p.id AS paper_id,
    p.venue,
    p.year,
    p.title,
    ts_headline('english', coalesce(p.title || '. ', '') || p.abstract, q.query,
                'StartSel=**, StopSel=**, MaxWords=30, MinWords=12, MaxFragments=1, FragmentDelimiter=" … "') AS snippet,
    round(top.rank::numeric, 4) AS score,
    lbl.label
FROM top
JOIN papers AS p ON p.pk = top.pk
JOIN paper_labels AS lbl ON lbl.paper_pk = top.pk
CROSS JOIN q
ORDER BY top.rank DESC, top.pk
