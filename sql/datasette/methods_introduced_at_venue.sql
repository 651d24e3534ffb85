-- Methods introduced at a venue
-- Methods, models, benchmarks and datasets that papers of a venue introduce; the year is optional.
SELECT
    method,
    kind,
    surface,
    label,
    venue,
    year,
    paper_id
FROM method_index
WHERE role = 'introduced'
    AND lower(venue) = lower(:venue)
    AND (:year = '' OR year = CAST(:year AS INTEGER))
ORDER BY kind, method
