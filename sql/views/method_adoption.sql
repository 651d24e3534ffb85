-- How a method spreads: per method and year, the papers that mention it without introducing it (every spelling and alias of a method is one method: see method_aliases).
-- column method: canonical name (one per artifact, whatever spelling or alias a paper writes)
-- column kind: method, model, architecture, framework, benchmark, dataset, loss, optimizer, metric ...
-- column year: the year of the papers
-- column papers: papers of that year that mention it (naming it, or defining an acronym that expands to one of its names)
-- column papers_with_code: of those, the papers with a code link
-- column introduced_year: the earliest year a paper introduces it (empty when none does)
CREATE VIEW method_adoption AS
-- Mentions as method_lineage counts them: the method named, or an acronym defined that expands
-- to one of its aliases (compared on the method key).
WITH mentioning AS (
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
)
SELECT
    m.name AS method,
    m.kind,
    p.year,
    COUNT(DISTINCT p.pk) AS papers,
    COUNT(DISTINCT CASE WHEN EXISTS (
        SELECT 1 FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
        WHERE pl.paper_pk = p.pk AND l.kind = 'code'
    ) THEN p.pk END) AS papers_with_code,
    (SELECT MIN(ip.year) FROM paper_method_roles AS ipm JOIN papers AS ip ON ip.pk = ipm.paper_pk
        WHERE ipm.method_id = m.id AND ipm.role = 'introduced') AS introduced_year
FROM mentioning AS mg
JOIN methods AS m ON m.id = mg.method_id
JOIN papers AS p ON p.pk = mg.paper_pk
WHERE p.year IS NOT NULL
GROUP BY m.id, m.name, m.kind, p.year;
