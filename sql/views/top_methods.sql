-- The most used methods of each year: per year and role (introduced, mentioned, or listed by the paper's source), each method with the papers of that year that give it that role, ranked (1 for the most papers; ties share a rank). For the ten most mentioned of 2018: WHERE year = 2018 AND role = 'mentioned' AND rank <= 10.
-- column year: the papers' year
-- column role: introduced (the papers propose it), mentioned (they use or compare with it), or listed (their source lists it)
-- column method: canonical name (every spelling and alias of a method is one method: see method_aliases)
-- column kind: method, model, architecture, framework, benchmark, dataset, loss, optimizer, metric ...
-- column papers: distinct papers of the year that give the method this role
-- column rank: 1 for the method with the most papers in its year and role; methods with as many papers share a rank
CREATE VIEW top_methods AS
WITH counts AS (
    SELECT
        mi.year,
        mi.role,
        mi.method,
        mi.kind,
        COUNT(DISTINCT mi.paper_id) AS papers
    FROM method_index AS mi
    GROUP BY mi.year, mi.role, mi.method, mi.kind
)
SELECT
    c.year,
    c.role,
    c.method,
    c.kind,
    c.papers,
    RANK() OVER (PARTITION BY c.year, c.role ORDER BY c.papers DESC) AS rank
FROM counts AS c;
