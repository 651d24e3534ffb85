-- Papers a gone source sights (`papers`), and how many of them a new source sights too
-- (`held`): the moved-file rule takes the new file for the gone one, moved, only when it
-- holds enough of them (etl.load.sources.holds_enough). A paper is the same row whatever
-- file it comes from (its identity keys), so sharing a paper is sharing its `paper_pk`.
SELECT
    count(DISTINCT old_sighting.paper_pk) AS papers,
    count(DISTINCT new_sighting.paper_pk) AS held
FROM sources AS old_source
JOIN paper_sources AS old_sighting ON old_sighting.source_id = old_source.id
LEFT JOIN sources AS new_source ON new_source.path = :new
LEFT JOIN paper_sources AS new_sighting
    ON new_sighting.source_id = new_source.id
    AND new_sighting.paper_pk = old_sighting.paper_pk
WHERE old_source.path = :old
