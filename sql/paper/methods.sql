-- The paper's methods by role: those it introduces, those it mentions, those its source lists.
SELECT pm.role, m.name, m.kind, pm.surface
FROM paper_methods AS pm
JOIN methods AS m ON m.id = pm.method_id
WHERE pm.paper_pk = :pk
UNION ALL
SELECT 'listed' AS role, lt.name, 'method' AS kind, lt.name AS surface
FROM paper_listed_terms AS plt
JOIN listed_terms AS lt ON lt.id = plt.term_id
WHERE plt.paper_pk = :pk AND lt.kind = 'method'
ORDER BY 1, 2
