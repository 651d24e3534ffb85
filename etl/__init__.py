"""Paper-list ETL: turn conference paper lists into a queryable relational database."""

from importlib.metadata import PackageNotFoundError, version

# The version is written once, in pyproject.toml; the installed package's metadata carries it.
try:
    __version__ = version("paper-list-etl")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
