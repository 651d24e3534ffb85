-- `etl query` on PostgreSQL: the user's statement, its values sent only for rows no larger
-- than the output may hold, so one huge value never reaches the client. Filled in by
-- etl/read.py (Python format fields): the positional column names c1, c2, ... (the
-- statement's own names may repeat or be odd), the row's size as text (the sum of
-- octet_length(ci::text)), each value kept with its type unless the row is too large, and the
-- statement itself, which the server has already described as exactly one statement.
-- OFFSET 0 keeps each level from being merged into the next: the statement's values are
-- computed once and the row's size once.
SELECT {values}, q.row_size
FROM (
    SELECT u.*, {sizes} AS row_size
    FROM (
        SELECT * FROM (
{statement}
        ) AS v
        OFFSET 0
    ) AS u ({columns})
    OFFSET 0
) AS q
