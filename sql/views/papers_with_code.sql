-- Papers that release code: one row per paper and code repository link.
-- column paper_id: the paper's stable id (papers.id)
-- column code_url: normalised repository URL, e.g. https://github.com/owner/repo
-- column repo_owner: owner (user or organisation) on the code host
-- column repo_name: repository name on the code host
-- column label: the title, else a label for an untitled paper (see paper_labels): never blank
CREATE VIEW papers_with_code AS
SELECT
    p.id AS paper_id,
    p.venue,
    p.year,
    p.title,
    l.url AS code_url,
    l.host AS code_host,
    l.repo_owner,
    l.repo_name,
    pl.found_in,
    lbl.label
FROM papers AS p
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk
JOIN paper_links AS pl ON pl.paper_pk = p.pk
JOIN links AS l ON l.id = pl.link_id
WHERE l.kind = 'code';
