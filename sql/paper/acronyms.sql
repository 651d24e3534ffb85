-- The acronyms the paper defines.
SELECT a.acronym, a.expansion
FROM acronyms AS a
WHERE a.paper_pk = :pk
ORDER BY a.acronym, a.expansion
