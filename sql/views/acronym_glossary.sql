-- Acronyms defined in the papers, with their expansions and the paper that defines each.
-- column acronym: the short form, singular (LLMs is stored as LLM)
-- column expansion: the long form, one spelling per acronym and expansion whatever its case (the spelling most papers write; on a tie, the one loaded first)
-- column written: the long form as this paper writes it
-- column label: the title, else a label for an untitled paper (see paper_labels): never blank
CREATE VIEW acronym_glossary AS
WITH spellings AS (
    SELECT
        acronym,
        lower(expansion) AS folded,
        expansion,
        count(*) AS uses,
        min(paper_pk) AS first_paper
    FROM acronyms
    GROUP BY acronym, expansion
),
ranked AS (
    SELECT
        acronym,
        folded,
        expansion,
        row_number() OVER (
            PARTITION BY acronym, folded ORDER BY uses DESC, first_paper
        ) AS rank
    FROM spellings
)
SELECT
    a.acronym,
    r.expansion,
    a.expansion AS written,
    p.id AS paper_id,
    p.title,
    p.venue,
    p.year,
    lbl.label
FROM acronyms AS a
JOIN ranked AS r
    ON r.acronym = a.acronym AND r.folded = lower(a.expansion) AND r.rank = 1
JOIN papers AS p ON p.pk = a.paper_pk
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk;
