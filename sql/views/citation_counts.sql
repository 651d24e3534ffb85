-- How often each paper is cited and how much it cites: the database's own counts (papers in the database citing it) kept apart from the counts its sources give (OpenAlex cited_by_count, Semantic Scholar citationCount, Crossref is-referenced-by-count), which count the whole literature. One row per paper.
-- column paper_id: the paper (papers.id)
-- column label: its title, else a label for an untitled paper (see paper_labels): never blank
-- column venue: the paper's venue
-- column year: the paper's year
-- column cited_by: papers in the database citing it
-- column references_given: works its sources say it cites (each once, whichever sources give it)
-- column references_in_database: of those, papers in the database
-- column references_as_text: of those, references given only as text (no usable id)
-- column source_cited_by: the largest count of citing works a source gives for it (null where none gives one)
CREATE VIEW citation_counts AS
WITH citers AS (
    SELECT cited_paper_pk AS paper_pk, COUNT(DISTINCT paper_pk) AS cited_by
    FROM citations
    WHERE cited_paper_pk IS NOT NULL AND cited_paper_pk <> paper_pk
    GROUP BY cited_paper_pk
),
cites AS (
    SELECT
        paper_pk,
        COUNT(DISTINCT cited_key) AS references_given,
        COUNT(DISTINCT CASE WHEN cited_paper_pk <> paper_pk THEN cited_paper_pk END)
            AS references_in_database,
        COUNT(DISTINCT CASE WHEN substr(cited_key, 1, 4) = 'ref:' THEN cited_key END) AS references_as_text
    FROM citations
    GROUP BY paper_pk
),
counted AS (
    SELECT paper_pk, MAX(cited_by_count) AS source_cited_by
    FROM paper_sources
    WHERE cited_by_count IS NOT NULL
    GROUP BY paper_pk
)
SELECT
    p.id AS paper_id,
    lbl.label,
    p.venue,
    p.year,
    COALESCE(cb.cited_by, 0) AS cited_by,
    COALESCE(ct.references_given, 0) AS references_given,
    COALESCE(ct.references_in_database, 0) AS references_in_database,
    COALESCE(ct.references_as_text, 0) AS references_as_text,
    cn.source_cited_by
FROM papers AS p
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk
LEFT JOIN citers AS cb ON cb.paper_pk = p.pk
LEFT JOIN cites AS ct ON ct.paper_pk = p.pk
LEFT JOIN counted AS cn ON cn.paper_pk = p.pk;
