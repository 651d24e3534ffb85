-- Every named method, model, benchmark or dataset with the papers that introduce or mention it.
-- column method: canonical name (one per artifact; see method_aliases for other spellings)
-- column kind: method, model, architecture, framework, benchmark, dataset, loss, optimizer, metric ...
-- column role: introduced (the paper proposes it) or mentioned (the paper uses or compares with it)
-- column surface: the form as written in the paper
-- column label: the title, else a label for an untitled paper (see paper_labels): never blank
CREATE VIEW method_index AS
SELECT
    m.name AS method,
    m.kind,
    pm.role,
    pm.surface,
    p.id AS paper_id,
    p.title,
    p.venue,
    p.year,
    lbl.label
FROM methods AS m
JOIN paper_methods AS pm ON pm.method_id = m.id
JOIN papers AS p ON p.pk = pm.paper_pk
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk;
