-- Tasks that papers address: how many papers address each, and how many of those release code.
-- column task: task name (tasks.name)
-- column topic: name of the topic the task belongs to
-- column papers: distinct papers addressing the task (tasks no paper addresses are left out)
-- column papers_with_code: of those, papers with at least one code link
-- column share_with_code: papers_with_code / papers, from 0 to 1
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
)
SELECT
    t.name AS task,
    topic.name AS topic,
    c.papers,
    c.papers_with_code,
    ROUND(1.0 * c.papers_with_code / c.papers, 4) AS share_with_code
FROM counts AS c
JOIN tasks AS t ON t.name = c.task_name
JOIN topics AS topic ON topic.slug = t.topic_slug;
