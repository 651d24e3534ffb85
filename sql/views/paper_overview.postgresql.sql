-- One row per paper: its text with topics, methods, code links and tasks joined by '; '.
-- column paper_id: the paper's stable id (papers.id)
-- column topics: topic names, best first
-- column methods: method names, introduced first
-- column code_urls: code repository URLs
-- column label: the title, else a label for an untitled paper (see paper_labels): never blank
-- column tasks: names of the tasks the paper addresses, best first (found in its text)
-- column listed_tasks: the tasks its source lists for it (the Papers with Code archive), in its order
-- column listed_methods: the methods its source lists for it, in its order
CREATE VIEW paper_overview AS
SELECT
    p.id AS paper_id,
    p.venue,
    p.year,
    p.title,
    p.abstract,
    (SELECT string_agg(t.name, '; ' ORDER BY pt.score DESC, t.name)
        FROM paper_topics AS pt JOIN topics AS t ON t.slug = pt.topic_slug
        WHERE pt.paper_pk = p.pk) AS topics,
    (SELECT string_agg(m.name, '; ' ORDER BY pm.role, m.name)
        FROM paper_method_roles AS pm JOIN methods AS m ON m.id = pm.method_id
        WHERE pm.paper_pk = p.pk) AS methods,
    (SELECT string_agg(l.url, '; ' ORDER BY l.url)
        FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
        WHERE pl.paper_pk = p.pk AND l.kind = 'code') AS code_urls,
    lbl.label,
    (SELECT string_agg(pt.task_name, '; ' ORDER BY pt.score DESC, pt.task_name)
        FROM paper_tasks AS pt
        WHERE pt.paper_pk = p.pk) AS tasks,
    (SELECT string_agg(lt.name, '; ' ORDER BY plt.position)
        FROM paper_listed_terms AS plt JOIN listed_terms AS lt ON lt.id = plt.term_id
        WHERE plt.paper_pk = p.pk AND lt.kind = 'task') AS listed_tasks,
    (SELECT string_agg(lt.name, '; ' ORDER BY plt.position)
        FROM paper_listed_terms AS plt JOIN listed_terms AS lt ON lt.id = plt.term_id
        WHERE plt.paper_pk = p.pk AND lt.kind = 'method') AS listed_methods
FROM papers AS p
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk;
