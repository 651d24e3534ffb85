-- Ranked full-text search (weighted tsvector: title and method names above the abstract),
-- with a highlighted snippet; only the top rows are given to ts_headline.
WITH q AS (SELECT websearch_to_tsquery('english', :query) AS query),
top AS (
    SELECT p.id, p.venue, p.year, p.title, p.abstract,
           ts_rank(p.search_vector, q.query) AS rank
    FROM papers AS p, q
    WHERE p.search_vector @@ q.query
    ORDER BY rank DESC, p.id
    LIMIT :limit
)
SELECT
    top.id AS paper_id,
    top.venue,
    top.year,
    top.title,
    ts_headline('english', coalesce(top.title || '. ', '') || top.abstract, q.query,
                'StartSel=**, StopSel=**, MaxWords=30, MinWords=12, MaxFragments=1, FragmentDelimiter=" … "') AS snippet,
    round(top.rank::numeric, 4) AS score
FROM top, q
ORDER BY top.rank DESC, top.id
