-- Methods introduced at a venue
-- Methods, models, benchmarks and datasets that papers of a venue introduce (the first 1,000 by kind and name); the year is optional.
-- The top rows are chosen before their papers' labels are computed: a label costs lookups.
WITH introduced AS (
    SELECT m.name AS method, m.kind, pm.surface, pm.paper_pk, p.id AS paper_id, p.venue, p.year
    FROM paper_method_roles AS pm
    JOIN methods AS m ON m.id = pm.method_id
    JOIN papers AS p ON p.pk = pm.paper_pk
    WHERE pm.role = 'introduced'
        AND lower(p.venue) = lower(:venue)
        AND (:year = '' OR p.year = CAST(:year AS INTEGER))
    ORDER BY m.kind, m.name, p.id
    LIMIT 1000
)
SELECT i.method, i.kind, i.surface, lbl.label, i.venue, i.year, i.paper_id
FROM introduced AS i
JOIN paper_labels AS lbl ON lbl.paper_pk = i.paper_pk
ORDER BY i.kind, i.method, i.paper_id
