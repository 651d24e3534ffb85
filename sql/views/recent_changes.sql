-- What each run changed, one row per event (newest has the highest event_id): papers added, removed or changed, sightings and code or project links added or removed.
-- column event_id: the event's number; later events have higher numbers
-- column run_id: the run that made the change (runs.id)
-- column changed_at: when the change was written (UTC)
-- column kind: paper_added, paper_removed, paper_changed, sighting_added, sighting_removed, link_added, link_removed; first_load or full_refresh for a run that records itself as one event
-- column field: title, abstract, authors, venue, year or status for paper_changed; code or project for a link; source for a sighting
-- column old_value: the value before (at most 1,000 characters, cut with '…'); the link or source removed
-- column new_value: the value after (at most 1,000 characters, cut with '…'); the link or source added
-- column paper_id: the paper's stable id (papers.id); a removed paper's stays in its events
-- column label: the paper's title (else its abstract's opening) when the change was made
-- column venue: the paper's venue when the change was made
-- column year: the paper's year when the change was made
CREATE VIEW recent_changes AS
SELECT
    e.id AS event_id,
    e.run_id,
    e.created_at AS changed_at,
    e.kind,
    e.field,
    e.old_value,
    e.new_value,
    e.paper_id,
    e.label,
    e.venue,
    e.year
FROM change_events AS e;
