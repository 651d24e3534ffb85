-- What an acronym stands for
-- The expansions papers give for an acronym (case-insensitive), most used first.
SELECT
    acronym,
    expansion,
    COUNT(DISTINCT paper_id) AS papers,
    MIN(label) AS example_paper
FROM acronym_glossary
WHERE lower(acronym) = lower(:acronym)
GROUP BY acronym, expansion
ORDER BY papers DESC, expansion
