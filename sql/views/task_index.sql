-- Tasks that papers address: how many papers address each, and how many of those release code.
-- Tasks found in the papers' text and tasks their sources list (the Papers with Code archive)
-- are counted apart.
-- column task: task name (tasks.name, or the name a source lists)
-- column topic: name of the topic the task belongs to (none for a listed task the taxonomy lacks)
-- column papers: distinct papers addressing the task (tasks no paper addresses are left out)
-- column papers_with_code: of those, papers with at least one code link
-- column share_with_code: papers_with_code / papers, from 0 to 1
-- column found_by: transform (found in the papers' text) or source (listed by their sources)
CREATE VIEW task_index AS
WITH with_code AS (
    SELECT DISTINCT pl.paper_pk
    FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
    WHERE l.kind = 'code'
),
counts AS (
    SELECT
        pt.task_name,
        COUNT(*) AS papers,
        COUNT(wc.paper_pk) AS papers_with_code
    FROM paper_tasks AS pt LEFT JOIN with_code AS wc ON wc.paper_pk = pt.paper_pk
    GROUP BY pt.task_name
),
listed AS (
    SELECT
        lt.name AS task_name,
        COUNT(*) AS papers,
        COUNT(wc.paper_pk) AS papers_with_code
    FROM listed_terms AS lt
    JOIN paper_listed_terms AS plt ON plt.term_id = lt.id
    LEFT JOIN with_code AS wc ON wc.paper_pk = plt.paper_pk
    WHERE lt.kind = 'task'
    GROUP BY lt.name
)
SELECT
    t.name AS task,
    topic.name AS topic,
    c.papers,
    c.papers_with_code,
    ROUND(1.0 * c.papers_with_code / c.papers, 4) AS share_with_code,
    'transform' AS found_by
FROM counts AS c
JOIN tasks AS t ON t.name = c.task_name
JOIN topics AS topic ON topic.slug = t.topic_slug
UNION ALL
SELECT
    l.task_name AS task,
    topic.name AS topic,
    l.papers,
    l.papers_with_code,
    ROUND(1.0 * l.papers_with_code / l.papers, 4) AS share_with_code,
    'source' AS found_by
FROM listed AS l
LEFT JOIN tasks AS t ON t.name = l.task_name
LEFT JOIN topics AS topic ON topic.slug = t.topic_slug;
