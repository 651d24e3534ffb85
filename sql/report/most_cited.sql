-- Most cited in this database: papers by how many papers of the database cite them (the count their sources give, for the whole literature, beside it)
SELECT
    label AS paper,
    venue,
    year,
    cited_by,
    source_cited_by
FROM citation_counts
WHERE cited_by > 0
ORDER BY cited_by DESC, label
LIMIT 20
