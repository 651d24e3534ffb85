"""The generated pages of the documentation site: the CLI and schema references.

Both are made from the code at build time, so they cannot drift from it: the CLI reference
is click's own `--help` of every command, the schema reference the `comment=` of the tables
in `etl/load/schema.py` and the header comments of `sql/views/*.sql`; the changelog page is
`CHANGELOG.md`, which stays at the top of the repository. MkDocs loads this file as a hook
(`mkdocs.yml`: `hooks`); nothing generated is committed.

    python tools/docs_reference.py cli      # print a page, to read it without building
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import click
from sqlalchemy import create_engine
from sqlalchemy.dialects import postgresql as postgresql_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect

CLI_PAGE = "reference/cli.md"
SCHEMA_PAGE = "reference/schema.md"
CHANGELOG_PAGE = "changelog.md"
ROOT = Path(__file__).resolve().parent.parent
HELP_WIDTH = 80  # the width of the site's code blocks


def commands() -> dict[str, click.Command]:
    """Every `etl` command by name, sorted."""
    from etl.cli import main

    return dict(sorted(main.commands.items()))


def command_help(name: str | None) -> str:
    """What `etl [NAME] --help` prints, at a fixed width so the page does not depend on a
    terminal."""
    from etl.cli import main

    root = click.Context(main, info_name="etl", terminal_width=HELP_WIDTH, **main.context_settings)
    if name is None:
        return main.get_help(root)
    command = main.commands[name]
    context = click.Context(
        command,
        info_name=name,
        parent=root,
        terminal_width=HELP_WIDTH,
        **command.context_settings,
    )
    return command.get_help(context)


def cli_reference() -> str:
    """The CLI reference page: each command's help, as the command prints it."""
    parts = [
        "# CLI reference\n",
        "Generated from the commands' own `--help` when the site is built; `etl COMMAND --help`"
        " prints the same.\n",
        "## etl\n",
        "```text\n" + command_help(None) + "\n```\n",
    ]
    for name in commands():
        parts.append(f"## etl {name}\n")
        parts.append("```text\n" + command_help(name) + "\n```\n")
    return "\n".join(parts)


def _cell(text: object) -> str:
    return str(text or "").replace("|", "\\|").replace("\n", " ")


def _type(column: Any) -> str:
    """The column's type on SQLite, and on PostgreSQL where that differs."""
    sqlite = column.type.compile(dialect=sqlite_dialect.dialect()).lower()
    postgresql = column.type.compile(dialect=postgresql_dialect.dialect()).lower()
    return sqlite if sqlite == postgresql else f"{sqlite} ({postgresql} on PostgreSQL)"


def _table_rows(table: Any) -> list[str]:
    rows = ["| column | type | key | description |", "|---|---|---|---|"]
    for column in table.columns:
        keys = []
        if column.primary_key:
            keys.append("primary key")
        keys += [f"→ `{fk.target_fullname}`" for fk in column.foreign_keys]
        if column.unique:
            keys.append("unique")
        if not column.nullable and not column.primary_key:
            keys.append("not null")
        rows.append(
            f"| `{column.name}` | {_type(column)} | {', '.join(keys)} | {_cell(column.comment)} |"
        )
    return rows


def _view_columns(view_names: list[str]) -> dict[str, list[str]]:
    """Each view's columns, read from SQLite after creating the tables and views in memory."""
    from etl.load.database import split_statements, view_definitions
    from etl.load.schema import metadata

    engine = create_engine("sqlite://")
    with engine.begin() as connection:
        metadata.create_all(connection)
        for view in view_definitions("sqlite"):
            for statement in split_statements(view.sql):
                connection.exec_driver_sql(statement)
        raw = connection.connection.dbapi_connection
        assert isinstance(raw, sqlite3.Connection)
        return {
            name: [row[1] for row in raw.execute(f"PRAGMA table_info({name})")]
            for name in view_names
        }


def schema_reference() -> str:
    """The schema reference page: every table and view with its columns and descriptions."""
    from etl.load.database import view_definitions
    from etl.load.schema import metadata

    parts = [
        "# Schema reference\n",
        "Generated from the schema when the site is built: the tables' and columns' comments in"
        " `etl/load/schema.py` (on PostgreSQL they are the `COMMENT`s) and the header comments"
        " of `sql/views/*.sql`. [Data model and views](../data-model.md) explains how they fit"
        " together.\n",
        "## Tables\n",
    ]
    for table in sorted(metadata.tables.values(), key=lambda t: t.name):
        parts.append(f"### {table.name}\n")
        if table.comment:
            parts.append(table.comment + "\n")
        parts.append("\n".join(_table_rows(table)) + "\n")
    parts.append("## Views\n")
    views = view_definitions("sqlite")
    columns = _view_columns([view.name for view in views])
    for view in sorted(views, key=lambda v: v.name):
        parts.append(f"### {view.name}\n")
        if view.description:
            parts.append(view.description + "\n")
        rows = ["| column | description |", "|---|---|"]
        rows += [f"| `{c}` | {_cell(view.column_comments.get(c))} |" for c in columns[view.name]]
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


def changelog() -> str:
    """The repository's CHANGELOG.md, shown in the site as it is (it lives outside docs/)."""
    return (ROOT / "CHANGELOG.md").read_text("utf-8")


PAGES = {CLI_PAGE: cli_reference, SCHEMA_PAGE: schema_reference, CHANGELOG_PAGE: changelog}


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: add the generated pages to the site, made fresh at every build."""
    from mkdocs.structure.files import File

    for path, make in PAGES.items():
        files.append(File.generated(config, path, content=make()))
    return files


if __name__ == "__main__":
    print({"cli": cli_reference, "schema": schema_reference}[sys.argv[1]]())
