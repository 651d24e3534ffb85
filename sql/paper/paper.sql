-- The paper a page shows: its label (never blank), text and the values its sightings decide.
SELECT p.pk, p.id, lbl.label, p.title, p.venue, p.year, p.status, p.abstract, p.keywords
FROM papers AS p
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk
WHERE p.pk = :pk
