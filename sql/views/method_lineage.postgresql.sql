-- Who builds on whom: each method a paper introduces, where and when, and how many later papers mention it (every spelling and alias of a method is one method: see method_aliases).
-- column method: canonical name (one per artifact, whatever spelling or alias a paper writes)
-- column kind: method, model, architecture, framework, benchmark, dataset, loss, optimizer, metric ...
-- column introduced_by: labels of the papers that introduce it, earliest year first, joined by ' | '
-- column introduced_at: their venues and years, e.g. 'ICML 2024', joined by ' | '
-- column introduced_year: the earliest year a paper introduces it
-- column mentioned_by: papers that mention it without introducing it, any year (naming it, or defining an acronym that expands to one of its names)
-- column later_papers: papers of a later year than introduced_year that mention it
-- column first_mention_year: the earliest year of a paper that mentions it (without introducing it)
-- column latest_mention_year: the latest year of a paper that mentions it (without introducing it)
-- column later_papers_with_code: later_papers that have a code link
-- column citing_adopters: papers that mention it and cite a paper introducing it (citations in the database)
-- column adopters: who builds on it: citing_adopters where a paper introducing it is cited in the database at all, else (no citations to go by) later_papers, from names alone
-- column adopters_from: what adopters counts: citations or names
CREATE VIEW method_lineage AS
WITH introductions AS (
    SELECT pm.method_id, p.venue, p.year, lbl.label
    FROM paper_method_roles AS pm
    JOIN papers AS p ON p.pk = pm.paper_pk
    JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk
    WHERE pm.role = 'introduced'
),
introduced AS (
    SELECT method_id, MIN(year) AS introduced_year
    FROM introductions
    GROUP BY method_id
),
introducers AS (
    SELECT method_id, string_agg(label, ' | ' ORDER BY COALESCE(year, 0), label) AS introduced_by
    FROM introductions
    GROUP BY method_id
),
places AS (
    SELECT method_id, string_agg(venue_year, ' | ' ORDER BY venue_year) AS introduced_at
    FROM (
        SELECT DISTINCT
            method_id,
            COALESCE(venue, '?') || ' ' || COALESCE(CAST(year AS TEXT), '?') AS venue_year
        FROM introductions
    ) AS distinct_places
    GROUP BY method_id
),
-- A paper mentions a method when it names it (any alias), or when it defines an acronym
-- whose expansion is one of the method's aliases (the glossary: compared on the method key,
-- lower case without spaces, hyphens, underscores, dots, slashes or apostrophes).
mentioning AS (
    SELECT pm.method_id, pm.paper_pk
    FROM paper_method_roles AS pm
    WHERE pm.role = 'mentioned'
    UNION
    SELECT ma.method_id, a.paper_pk
    FROM acronyms AS a
    JOIN method_aliases AS ma ON ma.key = lower(replace(replace(replace(replace(replace(
        replace(a.expansion, ' ', ''), '-', ''), '_', ''), '.', ''), '/', ''), '''', ''))
    WHERE NOT EXISTS (
        SELECT 1 FROM paper_method_roles AS own
        WHERE own.paper_pk = a.paper_pk AND own.method_id = ma.method_id
            AND own.role = 'introduced'
    )
),
mentions AS (
    SELECT
        mg.method_id,
        p.pk,
        p.year,
        CASE WHEN EXISTS (
            SELECT 1 FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
            WHERE pl.paper_pk = p.pk AND l.kind = 'code'
        ) THEN 1 ELSE 0 END AS has_code,
        CASE WHEN EXISTS (
            SELECT 1 FROM citations AS c
            JOIN paper_method_roles AS ip ON ip.paper_pk = c.cited_paper_pk
            WHERE c.paper_pk = p.pk AND ip.method_id = mg.method_id AND ip.role = 'introduced'
                AND c.cited_paper_pk <> c.paper_pk
        ) THEN 1 ELSE 0 END AS cites_introducer
    FROM mentioning AS mg
    JOIN papers AS p ON p.pk = mg.paper_pk
),
-- methods whose introducing papers some paper in the database cites: citations to go by
cited_methods AS (
    SELECT DISTINCT ip.method_id
    FROM paper_method_roles AS ip
    JOIN citations AS c ON c.cited_paper_pk = ip.paper_pk AND c.paper_pk <> ip.paper_pk
    WHERE ip.role = 'introduced'
)
SELECT
    m.name AS method,
    m.kind,
    ib.introduced_by,
    pl.introduced_at,
    d.introduced_year,
    COUNT(DISTINCT mt.pk) AS mentioned_by,
    COUNT(DISTINCT CASE WHEN mt.year > d.introduced_year THEN mt.pk END) AS later_papers,
    MIN(mt.year) AS first_mention_year,
    MAX(mt.year) AS latest_mention_year,
    COUNT(DISTINCT CASE WHEN mt.year > d.introduced_year AND mt.has_code = 1 THEN mt.pk END)
        AS later_papers_with_code,
    COUNT(DISTINCT CASE WHEN mt.cites_introducer = 1 THEN mt.pk END) AS citing_adopters,
    CASE WHEN cm.method_id IS NOT NULL
        THEN COUNT(DISTINCT CASE WHEN mt.cites_introducer = 1 THEN mt.pk END)
        ELSE COUNT(DISTINCT CASE WHEN mt.year > d.introduced_year THEN mt.pk END)
    END AS adopters,
    CASE WHEN cm.method_id IS NOT NULL THEN 'citations' ELSE 'names' END AS adopters_from
FROM introduced AS d
JOIN methods AS m ON m.id = d.method_id
JOIN introducers AS ib ON ib.method_id = d.method_id
JOIN places AS pl ON pl.method_id = d.method_id
LEFT JOIN mentions AS mt ON mt.method_id = d.method_id
LEFT JOIN cited_methods AS cm ON cm.method_id = d.method_id
GROUP BY
    m.id, m.name, m.kind, ib.introduced_by, pl.introduced_at, d.introduced_year, cm.method_id;
