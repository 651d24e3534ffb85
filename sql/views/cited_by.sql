-- Who cites whom, among the papers in the database: one row per cited paper and paper citing it (whichever sources gave the edge, and however many). For one paper's citers: WHERE paper_id = '...'; for its references: WHERE citing_paper_id = '...'. Edges to works not in the database are in the citations table (cited_paper_pk null).
-- column paper_id: the cited paper (papers.id)
-- column label: its title, else a label for an untitled paper (see paper_labels): never blank
-- column venue: the cited paper's venue
-- column year: the cited paper's year
-- column citing_paper_id: a paper citing it (papers.id)
-- column citing_label: that paper's title or label
-- column citing_venue: that paper's venue
-- column citing_year: that paper's year
CREATE VIEW cited_by AS
WITH edges AS (
    SELECT DISTINCT paper_pk AS citing_pk, cited_paper_pk AS cited_pk
    FROM citations
    WHERE cited_paper_pk IS NOT NULL AND cited_paper_pk <> paper_pk
)
SELECT
    p.id AS paper_id,
    lbl.label,
    p.venue,
    p.year,
    c.id AS citing_paper_id,
    cl.label AS citing_label,
    c.venue AS citing_venue,
    c.year AS citing_year
FROM edges AS e
JOIN papers AS p ON p.pk = e.cited_pk
JOIN paper_labels AS lbl ON lbl.paper_pk = e.cited_pk
JOIN papers AS c ON c.pk = e.citing_pk
JOIN paper_labels AS cl ON cl.paper_pk = e.citing_pk;
