-- Totals for the report's heading
SELECT
    (SELECT COUNT(*) FROM papers) AS papers,
    (SELECT COUNT(DISTINCT pl.paper_pk) FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id
        WHERE l.kind = 'code') AS papers_with_code,
    (SELECT COUNT(*) FROM methods) AS methods,
    (SELECT COUNT(DISTINCT acronym) FROM acronyms) AS acronyms,
    (SELECT COUNT(DISTINCT venue) FROM papers) AS venues
