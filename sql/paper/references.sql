-- The works the paper cites (each once, whichever sources give it): papers of the database first, by year, then the others by their id or text.
SELECT
    c.cited_key AS key,
    MIN(c.raw) AS raw,
    c.cited_paper_pk AS pk,
    l.label,
    p.venue,
    p.year
FROM citations AS c
LEFT JOIN papers AS p ON p.pk = c.cited_paper_pk
LEFT JOIN paper_labels AS l ON l.paper_pk = c.cited_paper_pk
WHERE c.paper_pk = :pk AND (c.cited_paper_pk IS NULL OR c.cited_paper_pk <> c.paper_pk)
GROUP BY c.cited_key, c.cited_paper_pk, l.label, p.venue, p.year
ORDER BY c.cited_paper_pk IS NULL, p.year DESC, l.label, c.cited_key
LIMIT 1000
