-- The methods picked up most by later papers (method_lineage): papers of a later year than its introduction that mention it, then every other paper mentioning it
SELECT
    method,
    kind,
    introduced_at,
    later_papers,
    later_papers_with_code,
    mentioned_by,
    first_mention_year,
    latest_mention_year
FROM method_lineage
WHERE mentioned_by > 0
ORDER BY later_papers DESC, mentioned_by DESC, method
LIMIT 15
