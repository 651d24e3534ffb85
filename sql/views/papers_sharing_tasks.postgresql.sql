-- Papers that share a task: for each paper, every other paper that addresses at least one of its tasks (found in the text or listed by the source), with how many and which. For one paper's neighbours: WHERE paper_id = '...' ORDER BY shared_tasks DESC.
-- column paper_id: the paper (papers.id)
-- column label: its title, else a label for an untitled paper (see paper_labels): never blank
-- column related_paper_id: another paper that addresses at least one of the same tasks
-- column related_label: that paper's title or label
-- column related_venue: that paper's venue
-- column related_year: that paper's year
-- column shared_tasks: how many tasks the two papers share
-- column tasks: the shared tasks' names in alphabetical order, joined by '; '
CREATE VIEW papers_sharing_tasks AS
WITH paper_task AS (
    SELECT pt.paper_pk, pt.task_name AS task
    FROM paper_tasks AS pt
    UNION
    SELECT plt.paper_pk, lt.name AS task
    FROM paper_listed_terms AS plt JOIN listed_terms AS lt ON lt.id = plt.term_id
    WHERE lt.kind = 'task'
),
shared AS (
    SELECT a.paper_pk, b.paper_pk AS related_pk, a.task
    FROM paper_task AS a
    JOIN paper_task AS b ON b.task = a.task AND b.paper_pk <> a.paper_pk
)
SELECT
    p.id AS paper_id,
    lbl.label,
    r.id AS related_paper_id,
    rl.label AS related_label,
    r.venue AS related_venue,
    r.year AS related_year,
    COUNT(*) AS shared_tasks,
    string_agg(s.task, '; ' ORDER BY s.task) AS tasks
FROM shared AS s
JOIN papers AS p ON p.pk = s.paper_pk
JOIN paper_labels AS lbl ON lbl.paper_pk = s.paper_pk
JOIN papers AS r ON r.pk = s.related_pk
JOIN paper_labels AS rl ON rl.paper_pk = s.related_pk
GROUP BY p.id, lbl.label, r.id, rl.label, r.venue, r.year;
