-- The ids sources give for the paper (DOI, arXiv, OpenReview ...), not the hashed content keys.
SELECT pk.key
FROM paper_keys AS pk
WHERE pk.paper_pk = :pk
  AND pk.key NOT LIKE 'abs:%' AND pk.key NOT LIKE 'title:%'
  AND pk.key NOT LIKE 'bib:%' AND pk.key NOT LIKE 'text:%'
ORDER BY pk.key
