-- The tasks the paper addresses: found in its text (best first), then those its source lists.
SELECT pt.task_name AS name, 'text' AS found_by, pt.score, pt.evidence
FROM paper_tasks AS pt
WHERE pt.paper_pk = :pk
UNION ALL
SELECT lt.name, 'source' AS found_by, NULL AS score, NULL AS evidence
FROM paper_listed_terms AS plt
JOIN listed_terms AS lt ON lt.id = plt.term_id
WHERE plt.paper_pk = :pk AND lt.kind = 'task'
ORDER BY 2 DESC, 3 DESC, 1
