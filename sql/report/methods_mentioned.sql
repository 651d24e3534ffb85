-- The methods mentioned by the most papers
SELECT m.name AS method, m.kind, COUNT(*) AS papers
FROM paper_method_roles AS pm
JOIN methods AS m ON m.id = pm.method_id
WHERE pm.role = 'mentioned'
GROUP BY m.name, m.kind
ORDER BY papers DESC, method
LIMIT 15
