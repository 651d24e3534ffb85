-- Acronyms defined in the papers, with their expansions and the paper that defines each.
-- column acronym: the short form, singular (LLMs is stored as LLM)
-- column expansion: the long form as written
CREATE VIEW acronym_glossary AS
SELECT
    a.acronym,
    a.expansion,
    p.id AS paper_id,
    p.title,
    p.venue,
    p.year
FROM acronyms AS a
JOIN papers AS p ON p.pk = a.paper_pk;
