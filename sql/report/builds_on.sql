-- Who builds on whom: methods introduced by one paper and mentioned by other papers of the database
SELECT
    m.name AS method,
    m.kind,
    lbl.label AS introduced_by,
    p.venue,
    p.year,
    COUNT(DISTINCT other.paper_pk) AS mentioned_by
FROM paper_method_roles AS intro
JOIN methods AS m ON m.id = intro.method_id
JOIN paper_method_roles AS other
    ON other.method_id = intro.method_id AND other.role = 'mentioned' AND other.paper_pk <> intro.paper_pk
JOIN papers AS p ON p.pk = intro.paper_pk
JOIN paper_labels AS lbl ON lbl.paper_pk = intro.paper_pk
WHERE intro.role = 'introduced'
GROUP BY m.name, m.kind, lbl.label, p.venue, p.year
ORDER BY mentioned_by DESC, method, introduced_by
LIMIT 20
