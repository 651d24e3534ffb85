-- Papers per venue and year, and how many of them release code.
-- column papers: distinct papers of the venue and year
-- column papers_with_code: of those, papers with at least one code link
-- column share_with_code: papers_with_code / papers, from 0 to 1
CREATE VIEW venue_summary AS
WITH with_code AS (
    SELECT DISTINCT pl.paper_pk
    FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
    WHERE l.kind = 'code'
)
SELECT
    p.venue,
    p.year,
    COUNT(*) AS papers,
    COUNT(wc.paper_pk) AS papers_with_code,
    ROUND(1.0 * COUNT(wc.paper_pk) / COUNT(*), 4) AS share_with_code
FROM papers AS p
LEFT JOIN with_code AS wc ON wc.paper_pk = p.pk
GROUP BY p.venue, p.year;
