-- The papers of the database citing the paper, newest first.
SELECT DISTINCT c.paper_pk AS pk, l.label, p.venue, p.year
FROM citations AS c
JOIN papers AS p ON p.pk = c.paper_pk
JOIN paper_labels AS l ON l.paper_pk = c.paper_pk
WHERE c.cited_paper_pk = :pk AND c.paper_pk <> :pk
ORDER BY p.year DESC, l.label
LIMIT 1000
