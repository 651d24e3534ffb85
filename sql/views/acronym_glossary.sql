-- Acronyms defined in the papers, with their expansions and the paper that defines each.
-- column acronym: the short form, singular (LLMs is stored as LLM)
-- column expansion: the long form as written
-- column label: the title, else a label for an untitled paper (see paper_labels): never blank
CREATE VIEW acronym_glossary AS
SELECT
    a.acronym,
    a.expansion,
    p.id AS paper_id,
    p.title,
    p.venue,
    p.year,
    lbl.label
FROM acronyms AS a
JOIN papers AS p ON p.pk = a.paper_pk
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk;
