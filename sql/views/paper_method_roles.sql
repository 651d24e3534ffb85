-- One row per paper and method it introduces or mentions: a paper's mentions that name one method (two of its names, joined by another paper's mention) counted once, as introduced if any of them is.
-- column paper_pk: the paper's internal row number (papers.pk), to join on
-- column method_id: the method (methods.id)
-- column role: introduced (the paper proposes it) or mentioned (the paper uses or compares with it)
-- column surface: the form as written (of the paper's first mention of the method)
-- column position: the paper's first mention of it, in the order of its text (1 for the first)
CREATE VIEW paper_method_roles AS
SELECT
    pm.paper_pk,
    pm.method_id,
    MIN(pm.role) AS role,
    (SELECT first.surface FROM paper_methods AS first
        WHERE first.paper_pk = pm.paper_pk AND first.method_id = pm.method_id
        ORDER BY first.position LIMIT 1) AS surface,
    MIN(pm.position) AS position
FROM paper_methods AS pm
GROUP BY pm.paper_pk, pm.method_id;
