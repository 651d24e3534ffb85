-- The tables whose planner statistics are stale: more rows changed since they were last
-- analysed than :base plus :scale times the rows they held then (autovacuum's own rule; a
-- table never analysed held none). The server's counters may not yet show this run's last
-- writes, so the rows the run changed (:changed) count for the tables of papers too.
SELECT c.relname
FROM pg_class AS c
LEFT JOIN pg_stat_user_tables AS st ON st.relid = c.oid
WHERE c.relnamespace = to_regnamespace(current_schema())
  AND c.relkind IN ('r', 'p')
  AND c.relname = ANY(CAST(:tables AS text[]))
  AND GREATEST(
        COALESCE(st.n_mod_since_analyze, 0),
        CASE WHEN c.relname = ANY(CAST(:paper_tables AS text[])) THEN :changed ELSE 0 END
      ) > :base + :scale * GREATEST(c.reltuples, 0)
ORDER BY c.relname
