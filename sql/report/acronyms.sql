-- The acronyms defined by the most papers, with how many different expansions they were given
-- (expansions differing only in case count once, as in acronym_glossary)
SELECT acronym, COUNT(DISTINCT paper_pk) AS papers, COUNT(DISTINCT lower(expansion)) AS expansions,
    MIN(expansion) AS one_expansion
FROM acronyms
GROUP BY acronym
ORDER BY papers DESC, acronym
LIMIT 20
