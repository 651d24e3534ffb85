-- Papers with code in a topic
-- A topic or an area by name or slug (an area includes its topics), e.g. Reinforcement Learning; one row per paper and code link.
SELECT DISTINCT
    pwc.label,
    pwc.venue,
    pwc.year,
    pwc.code_url,
    pwc.code_host,
    t.name AS topic,
    pwc.paper_id
FROM papers_with_code AS pwc
JOIN papers AS p ON p.id = pwc.paper_id
JOIN paper_topics AS pt ON pt.paper_pk = p.pk
JOIN topics AS t ON t.slug = pt.topic_slug
LEFT JOIN topics AS area ON area.slug = t.parent_slug
WHERE lower(:topic) IN (lower(t.name), lower(t.slug), lower(area.name), lower(area.slug))
ORDER BY pwc.venue, pwc.year, pwc.label
