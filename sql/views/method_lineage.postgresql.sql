-- Who builds on whom: each method a paper introduces, where and when, and how many later papers mention it (every spelling and alias of a method is one method: see method_aliases).
-- column method: canonical name (one per artifact, whatever spelling or alias a paper writes)
-- column kind: method, model, architecture, framework, benchmark, dataset, loss, optimizer, metric ...
-- column introduced_by: labels of the papers that introduce it, earliest year first, joined by ' | '
-- column introduced_at: their venues and years, e.g. 'ICML 2024', joined by ' | '
-- column introduced_year: the earliest year a paper introduces it
-- column mentioned_by: papers that mention it without introducing it, any year
-- column later_papers: papers of a later year than introduced_year that mention it
-- column first_mention_year: the earliest year of a paper that mentions it (without introducing it)
-- column latest_mention_year: the latest year of a paper that mentions it (without introducing it)
-- column later_papers_with_code: later_papers that have a code link
CREATE VIEW method_lineage AS
WITH introductions AS (
    SELECT pm.method_id, p.venue, p.year, lbl.label
    FROM paper_methods AS pm
    JOIN papers AS p ON p.pk = pm.paper_pk
    JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk
    WHERE pm.role = 'introduced'
),
introduced AS (
    SELECT method_id, MIN(year) AS introduced_year
    FROM introductions
    GROUP BY method_id
),
mentions AS (
    SELECT
        pm.method_id,
        p.pk,
        p.year,
        CASE WHEN EXISTS (
            SELECT 1 FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
            WHERE pl.paper_pk = p.pk AND l.kind = 'code'
        ) THEN 1 ELSE 0 END AS has_code
    FROM paper_methods AS pm
    JOIN papers AS p ON p.pk = pm.paper_pk
    WHERE pm.role = 'mentioned'
)
SELECT
    m.name AS method,
    m.kind,
    (SELECT string_agg(i.label, ' | ' ORDER BY COALESCE(i.year, 0), i.label)
        FROM introductions AS i WHERE i.method_id = m.id) AS introduced_by,
    (SELECT string_agg(venue_year, ' | ' ORDER BY venue_year) FROM (
        SELECT DISTINCT COALESCE(i.venue, '?') || ' ' || COALESCE(CAST(i.year AS TEXT), '?')
            AS venue_year
        FROM introductions AS i WHERE i.method_id = m.id) AS v) AS introduced_at,
    d.introduced_year,
    COUNT(DISTINCT mt.pk) AS mentioned_by,
    COUNT(DISTINCT CASE WHEN mt.year > d.introduced_year THEN mt.pk END) AS later_papers,
    MIN(mt.year) AS first_mention_year,
    MAX(mt.year) AS latest_mention_year,
    COUNT(DISTINCT CASE WHEN mt.year > d.introduced_year AND mt.has_code = 1 THEN mt.pk END)
        AS later_papers_with_code
FROM introduced AS d
JOIN methods AS m ON m.id = d.method_id
LEFT JOIN mentions AS mt ON mt.method_id = d.method_id
GROUP BY m.id, m.name, m.kind, d.introduced_year;
