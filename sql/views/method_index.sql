-- Every named method, model, benchmark or dataset with the papers that introduce or mention it,
-- and the methods a source lists for its papers (the Papers with Code archive).
-- column method: canonical name (one per artifact; see method_aliases for other spellings)
-- column kind: method, model, architecture, framework, benchmark, dataset, loss, optimizer, metric ...
-- column role: introduced (the paper proposes it), mentioned (the paper uses or compares with it), or listed (its source lists it)
-- column surface: the form as written in the paper (for a listed method: its name as the source writes it)
-- column label: the title, else a label for an untitled paper (see paper_labels): never blank
-- column found_by: transform (found in the paper's text) or source (listed by the paper's source)
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
    lbl.label,
    'transform' AS found_by
FROM methods AS m
JOIN paper_method_roles AS pm ON pm.method_id = m.id
JOIN papers AS p ON p.pk = pm.paper_pk
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk
UNION ALL
SELECT
    lt.name AS method,
    'method' AS kind,
    'listed' AS role,
    lt.name AS surface,
    p.id AS paper_id,
    p.title,
    p.venue,
    p.year,
    lbl.label,
    'source' AS found_by
FROM listed_terms AS lt
JOIN paper_listed_terms AS plt ON plt.term_id = lt.id
JOIN papers AS p ON p.pk = plt.paper_pk
JOIN paper_labels AS lbl ON lbl.paper_pk = p.pk
WHERE lt.kind = 'method';
