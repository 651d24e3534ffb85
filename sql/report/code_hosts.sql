-- Where code is hosted: papers and repositories per code host
SELECT l.host, COUNT(DISTINCT pl.paper_pk) AS papers, COUNT(DISTINCT l.id) AS repositories
FROM links AS l
JOIN paper_links AS pl ON pl.link_id = l.id
WHERE l.kind = 'code'
GROUP BY l.host
ORDER BY papers DESC, l.host
LIMIT 10
