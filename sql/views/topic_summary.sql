-- Papers per topic (an area counts the papers of its topics too) and how many release code.
-- column topic: topic name
-- column parent: name of the area the topic belongs to (empty for an area)
-- column papers: distinct papers with the topic
-- column papers_with_code: of those, papers with at least one code link
-- column share_with_code: papers_with_code / papers, from 0 to 1
CREATE VIEW topic_summary AS
WITH RECURSIVE topic_ancestors (slug, ancestor) AS (
    SELECT slug, slug FROM topics
    UNION ALL
    SELECT ta.slug, t.parent_slug
    FROM topic_ancestors AS ta JOIN topics AS t ON t.slug = ta.ancestor
    WHERE t.parent_slug IS NOT NULL
),
members AS (
    SELECT DISTINCT ta.ancestor AS slug, pt.paper_pk
    FROM paper_topics AS pt JOIN topic_ancestors AS ta ON ta.slug = pt.topic_slug
),
with_code AS (
    SELECT DISTINCT pl.paper_pk
    FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
    WHERE l.kind = 'code'
),
counts AS (
    SELECT
        m.slug,
        COUNT(*) AS papers,
        COUNT(wc.paper_pk) AS papers_with_code
    FROM members AS m LEFT JOIN with_code AS wc ON wc.paper_pk = m.paper_pk
    GROUP BY m.slug
)
SELECT
    t.name AS topic,
    t.slug,
    parent.name AS parent,
    COALESCE(c.papers, 0) AS papers,
    COALESCE(c.papers_with_code, 0) AS papers_with_code,
    CASE WHEN COALESCE(c.papers, 0) = 0 THEN 0.0
         ELSE ROUND(1.0 * c.papers_with_code / c.papers, 4) END AS share_with_code
FROM topics AS t
LEFT JOIN topics AS parent ON parent.slug = t.parent_slug
LEFT JOIN counts AS c ON c.slug = t.slug;
