-- The papers related to one paper (bound as pk), scored as the related_papers view scores
-- them (keep the two in step, tests/read/test_citation_views.py compares them), the best
-- first, as many as the bound limit. Every part starts from the paper's own rows, so a paper
-- is answered without the pairs of all the others (the view computes those, for BI tools
-- reading it whole).
WITH mine AS (
    SELECT DISTINCT cited_key FROM citations WHERE paper_pk = :pk
),
edges AS (
    SELECT DISTINCT paper_pk AS citing, cited_paper_pk AS cited
    FROM citations
    WHERE (paper_pk = :pk OR cited_paper_pk = :pk)
        AND cited_paper_pk IS NOT NULL AND cited_paper_pk <> paper_pk
),
coupling AS (
    SELECT c.paper_pk AS b, COUNT(DISTINCT c.cited_key) AS n
    FROM mine AS m
    JOIN citations AS c ON c.cited_key = m.cited_key AND c.paper_pk <> :pk
    GROUP BY c.paper_pk
),
-- papers cited by a paper that also cites this one
cocited AS (
    SELECT other.cited_paper_pk AS b, COUNT(DISTINCT other.paper_pk) AS n
    FROM citations AS mine_cited
    JOIN citations AS other ON other.paper_pk = mine_cited.paper_pk
    WHERE mine_cited.cited_paper_pk = :pk AND mine_cited.paper_pk <> :pk
        AND other.cited_paper_pk IS NOT NULL AND other.cited_paper_pk <> :pk
        AND other.cited_paper_pk <> other.paper_pk
    GROUP BY other.cited_paper_pk
),
-- from the mentions themselves (indexed by paper and by method), not paper_method_roles,
-- which groups every paper's mentions first: a method is introduced by a paper when any of
-- its mentions there is
methods AS (
    SELECT o.paper_pk AS b, COUNT(DISTINCT x.method_id) AS n
    FROM paper_methods AS x
    JOIN paper_methods AS o ON o.method_id = x.method_id AND o.paper_pk <> x.paper_pk
    WHERE x.paper_pk = :pk AND (x.role = 'introduced' OR o.role = 'introduced')
    GROUP BY o.paper_pk
),
tasks AS (
    SELECT y.paper_pk AS b, COUNT(*) AS n
    FROM paper_tasks AS x
    JOIN paper_tasks AS y ON y.task_name = x.task_name AND y.paper_pk <> x.paper_pk
    WHERE x.paper_pk = :pk
    GROUP BY y.paper_pk
),
candidates AS (
    SELECT b FROM coupling
    UNION SELECT b FROM cocited
    UNION SELECT cited AS b FROM edges WHERE citing = :pk
    UNION SELECT citing AS b FROM edges WHERE cited = :pk
    UNION SELECT b FROM methods
),
scored AS (
    SELECT
        c.b,
        CASE WHEN EXISTS (SELECT 1 FROM edges AS e WHERE e.citing = :pk AND e.cited = c.b)
            THEN 1 ELSE 0 END AS cites,
        CASE WHEN EXISTS (SELECT 1 FROM edges AS e WHERE e.citing = c.b AND e.cited = :pk)
            THEN 1 ELSE 0 END AS cited_by,
        COALESCE(cp.n, 0) AS shared_references,
        COALESCE(cc.n, 0) AS co_citations,
        COALESCE(m.n, 0) AS shared_methods,
        COALESCE(t.n, 0) AS shared_tasks
    FROM candidates AS c
    LEFT JOIN coupling AS cp ON cp.b = c.b
    LEFT JOIN cocited AS cc ON cc.b = c.b
    LEFT JOIN methods AS m ON m.b = c.b
    LEFT JOIN tasks AS t ON t.b = c.b
),
ranked AS (
    SELECT
        s.*,
        3 * (s.cites + s.cited_by) + s.shared_references + s.co_citations
            + 2 * s.shared_methods + s.shared_tasks AS score,
        r.id AS related_paper_id
    FROM scored AS s
    JOIN papers AS r ON r.pk = s.b
),
-- the best first, before their labels are made (for these rows only)
top AS (
    SELECT * FROM ranked ORDER BY score DESC, related_paper_id LIMIT :limit
)
SELECT
    ROW_NUMBER() OVER (ORDER BY n.score DESC, n.related_paper_id) AS rank,
    n.related_paper_id,
    rl.label AS related_label,
    r.venue AS related_venue,
    r.year AS related_year,
    n.score,
    n.b AS related_pk,
    n.cites,
    n.cited_by,
    n.shared_references,
    n.co_citations,
    n.shared_methods,
    n.shared_tasks
FROM top AS n
JOIN papers AS r ON r.pk = n.b
JOIN paper_labels AS rl ON rl.paper_pk = n.b
ORDER BY n.score DESC, n.related_paper_id
