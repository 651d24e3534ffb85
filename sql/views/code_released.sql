-- Papers whose first code repository arrived after the paper was first loaded: when it was loaded, and when its code came.
-- column paper_id: the paper's stable id (papers.id)
-- column label: the title, else a label for an untitled paper (see paper_labels): never blank
-- column first_loaded_at: when the run that first stored the paper started (UTC)
-- column code_released_at: when a load first found a code link for it (UTC)
-- column code_url: the first code link found, e.g. https://github.com/owner/repo
-- column first_loaded_run: the run that first stored the paper (runs.id)
-- column code_released_run: the run that found its first code link (runs.id)
CREATE VIEW code_released AS
WITH first_code AS (
    SELECT paper_id, MIN(id) AS event_id
    FROM change_events
    WHERE kind = 'link_added' AND field = 'code'
    GROUP BY paper_id
)
SELECT
    p.id AS paper_id,
    lbl.label,
    p.venue,
    p.year,
    r.started_at AS first_loaded_at,
    e.created_at AS code_released_at,
    e.new_value AS code_url,
    p.created_run_id AS first_loaded_run,
    e.run_id AS code_released_run
FROM first_code AS f
JOIN change_events AS e ON e.id = f.event_id
JOIN papers AS p ON p.id = f.paper_id
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk
JOIN runs AS r ON r.id = p.created_run_id
-- none of its code links, present or removed since, came with the paper (no event added it)
WHERE NOT EXISTS (
    SELECT 1
    FROM paper_links AS pl
    JOIN links AS l ON l.id = pl.link_id
    WHERE pl.paper_pk = p.pk AND l.kind = 'code' AND NOT EXISTS (
        SELECT 1 FROM change_events AS a
        WHERE a.paper_id = p.id AND a.kind = 'link_added' AND a.field = 'code'
            AND a.new_value = l.url
    )
)
AND NOT EXISTS (
    SELECT 1
    FROM change_events AS gone
    WHERE gone.paper_id = p.id AND gone.kind = 'link_removed' AND gone.field = 'code'
        AND NOT EXISTS (
            SELECT 1 FROM change_events AS a
            WHERE a.paper_id = p.id AND a.kind = 'link_added' AND a.field = 'code'
                AND a.new_value = gone.old_value AND a.id < gone.id
        )
)
AND e.run_id > p.created_run_id;
