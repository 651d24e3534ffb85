-- Papers and share with code per venue and year (a paper counts once per venue and year, whatever statuses the lists give it there)
WITH with_code AS (
    SELECT DISTINCT pl.paper_pk
    FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
    WHERE l.kind = 'code'
),
sightings AS (
    SELECT DISTINCT ps.paper_pk, ps.venue, ps.year
    FROM paper_sources AS ps
)
SELECT
    s.venue,
    s.year,
    COUNT(*) AS papers,
    COUNT(wc.paper_pk) AS papers_with_code,
    ROUND(1.0 * COUNT(wc.paper_pk) / COUNT(*), 4) AS share_with_code
FROM sightings AS s
LEFT JOIN with_code AS wc ON wc.paper_pk = s.paper_pk
GROUP BY s.venue, s.year
ORDER BY s.venue, s.year
