-- The paper's authors in order, with the link its source gives for each.
SELECT pa.position, a.id, a.name, pa.homepage
FROM paper_authors AS pa
JOIN authors AS a ON a.id = pa.author_id
WHERE pa.paper_pk = :pk
ORDER BY pa.position
