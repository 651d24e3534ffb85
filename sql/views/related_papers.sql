-- Papers related to each paper, scored, the ten best per paper: one cites the other (3 points each way), bibliographic coupling (1 point per work both cite), co-citation (1 point per paper in the database citing both), a method one of them introduces and the other introduces or mentions (2 points each), and, for pairs related so, each task both address (1 point). It scores every pair before ranking (costly with widely cited works): for one paper, etl related PAPER runs the same scoring from that paper's rows (sql/queries/related.sql).
-- column paper_id: the paper (papers.id)
-- column label: its title, else a label for an untitled paper (see paper_labels): never blank
-- column related_paper_id: a related paper (papers.id)
-- column related_label: that paper's title or label
-- column related_venue: that paper's venue
-- column related_year: that paper's year
-- column score: 3 x (cites + cited_by) + shared_references + co_citations + 2 x shared_methods + shared_tasks
-- column rank: 1 for the paper's best-scored related paper (ties by the related paper's id); at most 10
-- column cites: 1 where the paper cites the related one, else 0
-- column cited_by: 1 where the related paper cites the paper, else 0
-- column shared_references: works both cite (bibliographic coupling)
-- column co_citations: papers in the database citing both (co-citation)
-- column shared_methods: methods one of them introduces and the other introduces or mentions
-- column shared_tasks: tasks both address (found in the text)
CREATE VIEW related_papers AS
WITH refs AS (
    SELECT DISTINCT paper_pk, cited_key FROM citations
),
edges AS (
    SELECT DISTINCT paper_pk AS citing, cited_paper_pk AS cited
    FROM citations
    WHERE cited_paper_pk IS NOT NULL AND cited_paper_pk <> paper_pk
),
coupling AS (
    SELECT r1.paper_pk AS a, r2.paper_pk AS b, COUNT(*) AS n
    FROM refs AS r1
    JOIN refs AS r2 ON r2.cited_key = r1.cited_key AND r2.paper_pk <> r1.paper_pk
    GROUP BY r1.paper_pk, r2.paper_pk
),
cocited AS (
    SELECT e1.cited AS a, e2.cited AS b, COUNT(*) AS n
    FROM edges AS e1
    JOIN edges AS e2 ON e2.citing = e1.citing AND e2.cited <> e1.cited
    GROUP BY e1.cited, e2.cited
),
introduced AS (
    SELECT paper_pk, method_id FROM paper_method_roles WHERE role = 'introduced'
),
-- from the introductions only: a method everyone mentions relates no one
method_pairs AS (
    SELECT i.paper_pk AS a, o.paper_pk AS b, i.method_id
    FROM introduced AS i
    JOIN paper_method_roles AS o ON o.method_id = i.method_id AND o.paper_pk <> i.paper_pk
    UNION
    SELECT o.paper_pk AS a, i.paper_pk AS b, i.method_id
    FROM introduced AS i
    JOIN paper_method_roles AS o ON o.method_id = i.method_id AND o.paper_pk <> i.paper_pk
),
methods AS (
    SELECT a, b, COUNT(*) AS n FROM method_pairs GROUP BY a, b
),
candidates AS (
    SELECT a, b FROM coupling
    UNION SELECT a, b FROM cocited
    UNION SELECT citing AS a, cited AS b FROM edges
    UNION SELECT cited AS a, citing AS b FROM edges
    UNION SELECT a, b FROM methods
),
scored AS (
    SELECT
        c.a,
        c.b,
        CASE WHEN EXISTS (SELECT 1 FROM edges AS e WHERE e.citing = c.a AND e.cited = c.b)
            THEN 1 ELSE 0 END AS cites,
        CASE WHEN EXISTS (SELECT 1 FROM edges AS e WHERE e.citing = c.b AND e.cited = c.a)
            THEN 1 ELSE 0 END AS cited_by,
        COALESCE(cp.n, 0) AS shared_references,
        COALESCE(cc.n, 0) AS co_citations,
        COALESCE(m.n, 0) AS shared_methods,
        (SELECT COUNT(*) FROM paper_tasks AS x
            JOIN paper_tasks AS y ON y.task_name = x.task_name
            WHERE x.paper_pk = c.a AND y.paper_pk = c.b) AS shared_tasks
    FROM candidates AS c
    LEFT JOIN coupling AS cp ON cp.a = c.a AND cp.b = c.b
    LEFT JOIN cocited AS cc ON cc.a = c.a AND cc.b = c.b
    LEFT JOIN methods AS m ON m.a = c.a AND m.b = c.b
),
ranked AS (
    SELECT
        s.*,
        3 * (s.cites + s.cited_by) + s.shared_references + s.co_citations
            + 2 * s.shared_methods + s.shared_tasks AS score,
        r.id AS related_id
    FROM scored AS s
    JOIN papers AS r ON r.pk = s.b
),
numbered AS (
    SELECT
        ranked.*,
        ROW_NUMBER() OVER (PARTITION BY a ORDER BY score DESC, related_id) AS rank
    FROM ranked
)
SELECT
    p.id AS paper_id,
    lbl.label,
    n.related_id AS related_paper_id,
    rl.label AS related_label,
    r.venue AS related_venue,
    r.year AS related_year,
    n.score,
    n.rank,
    n.cites,
    n.cited_by,
    n.shared_references,
    n.co_citations,
    n.shared_methods,
    n.shared_tasks
FROM numbered AS n
JOIN papers AS p ON p.pk = n.a
JOIN paper_labels AS lbl ON lbl.paper_pk = n.a
JOIN papers AS r ON r.pk = n.b
JOIN paper_labels AS rl ON rl.paper_pk = n.b
WHERE n.rank <= 10;
