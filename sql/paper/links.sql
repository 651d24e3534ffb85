-- The paper's links: code first, then the paper, project and data pages, then the rest.
SELECT l.kind, l.url, l.host, pl.found_in
FROM paper_links AS pl
JOIN links AS l ON l.id = pl.link_id
WHERE pl.paper_pk = :pk
ORDER BY CASE l.kind WHEN 'code' THEN 0 WHEN 'paper' THEN 1 WHEN 'project' THEN 2
    WHEN 'data' THEN 3 ELSE 4 END, l.url
