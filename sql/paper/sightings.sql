-- Where the paper was seen: each file and position, with the venue, year and status it gives.
SELECT ps.venue, ps.year, ps.status, s.path, ps.position, s.format
FROM paper_sources AS ps
JOIN sources AS s ON s.id = ps.source_id
WHERE ps.paper_pk = :pk
ORDER BY ps.year, ps.venue, s.path, ps.position
