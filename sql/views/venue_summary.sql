-- Papers per venue, year and status as the lists give them, and how many release code. A paper counts once for each venue, year and status it was seen with (a paper rejected at one venue and accepted at another counts at both): add up a venue's statuses for all its papers, or leave out the refused ones (Reject, Withdraw, Desk Reject) for the accepted ones.
-- column status: status or track as the list gives it (Poster, Oral, Reject ...); NULL when it gives none
-- column papers: distinct papers seen at the venue and year with this status
-- column papers_with_code: of those, papers with at least one code link
-- column share_with_code: papers_with_code / papers, from 0 to 1
CREATE VIEW venue_summary AS
WITH with_code AS (
    SELECT DISTINCT pl.paper_pk
    FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
    WHERE l.kind = 'code'
),
sightings AS (
    SELECT DISTINCT ps.paper_pk, ps.venue, ps.year, ps.status
    FROM paper_sources AS ps
)
SELECT
    s.venue,
    s.year,
    s.status,
    COUNT(*) AS papers,
    COUNT(wc.paper_pk) AS papers_with_code,
    ROUND(1.0 * COUNT(wc.paper_pk) / COUNT(*), 4) AS share_with_code
FROM sightings AS s
LEFT JOIN with_code AS wc ON wc.paper_pk = s.paper_pk
GROUP BY s.venue, s.year, s.status;
