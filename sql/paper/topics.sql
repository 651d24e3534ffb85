-- The paper's topics, best first, with the area each belongs to and the terms that matched.
SELECT t.name, area.name AS area, pt.score, pt.evidence
FROM paper_topics AS pt
JOIN topics AS t ON t.slug = pt.topic_slug
LEFT JOIN topics AS area ON area.slug = t.parent_slug
WHERE pt.paper_pk = :pk
ORDER BY pt.score DESC, t.name
