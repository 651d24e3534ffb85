-- Topics by papers, with the share that releases code (the 20 largest topics; areas excluded)
SELECT topic, parent AS area, papers, papers_with_code, share_with_code
FROM topic_summary
WHERE papers > 0 AND parent IS NOT NULL
ORDER BY papers DESC, topic
LIMIT 20
