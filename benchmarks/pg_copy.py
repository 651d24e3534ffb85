"""The Postgres baseline: psycopg 3 `COPY` of JSON Lines records + weighted tsvector + GIN index.

Usage: python benchmarks/pg_copy.py RECORDS.jsonl POSTGRES_URL

Loads into a `papers` table of an (empty) database: a stored generated `search_vector`
(title weight A, abstract weight B) is computed during the COPY, then the GIN index is built.
This is what a user would write by hand; it does no extraction at all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psycopg

CREATE_TABLE = """
CREATE TABLE papers (
    id text PRIMARY KEY,
    title text,
    abstract text,
    authors text[],
    github text,
    search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', coalesce(title, '')), 'A')
        || setweight(to_tsvector('english', coalesce(abstract, '')), 'B')
    ) STORED
)
"""
COPY = "COPY papers (id, title, abstract, authors, github) FROM STDIN"
CREATE_INDEX = "CREATE INDEX ix_papers_search_vector ON papers USING gin (search_vector)"


def libpq_url(url: str) -> str:
    """A SQLAlchemy-style `postgresql+psycopg://` URL as psycopg expects it."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def load(records: Path, url: str) -> int:
    """Create the table, COPY every record, build the index, commit; return the row count."""
    count = 0
    with psycopg.connect(libpq_url(url)) as conn:
        conn.execute(CREATE_TABLE)
        with conn.cursor() as cur, cur.copy(COPY) as copy, records.open(encoding="utf-8") as lines:
            for line in lines:
                data = json.loads(line)
                row = (
                    data.get("id"),
                    data.get("title"),
                    data.get("abstract"),
                    data.get("authors"),
                    data.get("github"),
                )
                copy.write_row(row)
                count += 1
        conn.execute(CREATE_INDEX)
    return count


def main(argv: list[str]) -> int:
    """Load the file given on the command line into the database given after it."""
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    count = load(Path(argv[0]), argv[1])
    print(f"copied {count:,} records, built the GIN index")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
