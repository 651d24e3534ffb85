-- A label for every paper, never blank: its title, else a method it introduces, else the opening words of its abstract (the stored title stays NULL).
-- column paper_pk: the paper's internal row number (papers.pk), to join on
-- column paper_id: the paper's stable id (papers.id)
-- column label: the title; else the name of the first method the paper introduces, in the order of its text; else the abstract's first 90 characters cut at a word, with '…'
CREATE VIEW paper_labels AS
SELECT
    p.pk AS paper_pk,
    p.id AS paper_id,
    COALESCE(
        NULLIF(TRIM(p.title), ''),
        (SELECT m.name FROM paper_methods AS pm JOIN methods AS m ON m.id = pm.method_id
            WHERE pm.paper_pk = p.pk AND pm.role = 'introduced'
            ORDER BY pm.position LIMIT 1),
        CASE WHEN LENGTH(p.abstract) <= 90 THEN NULLIF(TRIM(p.abstract), '')
            -- RTRIM with the text's own non-space characters removes the cut last word.
            ELSE COALESCE(
                NULLIF(RTRIM(RTRIM(SUBSTR(p.abstract, 1, 91),
                                   REPLACE(SUBSTR(p.abstract, 1, 91), ' ', ''))), ''),
                SUBSTR(p.abstract, 1, 90)) || '…'
        END,
        p.id
    ) AS label
FROM papers AS p;
