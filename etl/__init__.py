"""Paper-list ETL: turn conference paper lists into a queryable relational database."""

__version__ = "0.1.0"
