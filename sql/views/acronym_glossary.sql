-- Acronyms defined in the papers, with their expansions and the paper that defines each.
-- column acronym: the short form, singular (LLMs is stored as LLM)
-- column expansion: the long form as written
CREATE VIEW acronym_glossary AS
SELECT
    a.acronym,
    a.expansion,
    a.paper_id,
    p.title,
    p.venue,
    p.year
FROM acronyms AS a
JOIN papers AS p ON p.id = a.paper_id;
