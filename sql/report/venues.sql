-- Papers and share with code per venue and year
SELECT venue, year, papers, papers_with_code, share_with_code
FROM venue_summary
ORDER BY venue, year
