-- Papers per venue and year across statuses: each paper once, whatever status (Poster, Oral, Reject ...) or how many lists name it there, with how many were accepted or refused and how many release code.
-- column venue: venue as the lists give it (canonical name)
-- column year: year as the lists give it
-- column papers: distinct papers seen at the venue and year, whatever their status
-- column accepted: of those, papers seen there with a status that is no refusal, or with none
-- column refused: of those, papers whose every status there is a refusal (Reject, Withdrawn, Desk Reject)
-- column papers_with_code: of those, papers with at least one code link
-- column share_with_code: papers_with_code / papers, from 0 to 1
CREATE VIEW venue_year_totals AS
WITH with_code AS (
    SELECT DISTINCT pl.paper_pk
    FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
    WHERE l.kind = 'code'
),
per_paper AS (
    SELECT
        ps.venue,
        ps.year,
        ps.paper_pk,
        -- a status naming a refusal: the text holds `reject` or `withdr` (REPLACE removes it)
        MIN(CASE
            WHEN REPLACE(LOWER(COALESCE(ps.status, '')), 'reject', '')
                <> LOWER(COALESCE(ps.status, '')) THEN 1
            WHEN REPLACE(LOWER(COALESCE(ps.status, '')), 'withdr', '')
                <> LOWER(COALESCE(ps.status, '')) THEN 1
            ELSE 0
        END) AS refused
    FROM paper_sources AS ps
    GROUP BY ps.venue, ps.year, ps.paper_pk
)
SELECT
    pp.venue,
    pp.year,
    COUNT(*) AS papers,
    SUM(1 - pp.refused) AS accepted,
    SUM(pp.refused) AS refused,
    COUNT(wc.paper_pk) AS papers_with_code,
    ROUND(1.0 * COUNT(wc.paper_pk) / COUNT(*), 4) AS share_with_code
FROM per_paper AS pp
LEFT JOIN with_code AS wc ON wc.paper_pk = pp.paper_pk
GROUP BY pp.venue, pp.year;
