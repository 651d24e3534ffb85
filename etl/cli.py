"""The `etl` command: thin click wrappers over the library; errors become `Error: ...`.

Commands import the library (SQLAlchemy, Alembic) when they run, not with this module: the
transform's worker processes start by importing the main script (multiprocessing's `spawn`),
which for the `etl` command is this module, and each would otherwise carry all of it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from etl import __version__
from etl.config import mask_url, resolve_database_url
from etl.errors import EtlError
from etl.models import RunReport
from etl.output import FORMATS, render
from etl.parallel import default_workers
from etl.signals import stop_on_sigterm

F = TypeVar("F", bound=Callable[..., Any])

EXIT_ERROR = 1
EXIT_PARTIAL = 3  # the run finished, but some records or files were rejected

err = Console(stderr=True, highlight=False, soft_wrap=True)


def handle_errors(func: F) -> F:
    """Print library errors as `Error: ...` and exit 1; Ctrl-C exits 130 without a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except EtlError as exc:
            err.print(f"[red]Error:[/] {escape(str(exc))}")
            sys.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            err.print("Interrupted: sources already committed are kept; rerun to finish.")
            sys.exit(130)

    return wrapper  # type: ignore[return-value]


db_option = click.option(
    "--db",
    "database",
    metavar="URL",
    help="Database URL (default: $ETL_DATABASE_URL, else sqlite:///papers.db). "
    "PostgreSQL: postgresql+psycopg://USER@HOST/DB.",
)
format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="etl")
def main() -> None:
    """Turn conference paper lists into a queryable SQLite or PostgreSQL database.

    `etl run` loads paper lists; `etl search`, `etl query`, `etl stats` and `etl views` read.
    """


@main.command("run")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@db_option
@click.option("--venue", help="Venue for every record (overrides headers and file names).")
@click.option("--year", type=int, help="Year for every record (overrides headers and file names).")
@click.option(
    "--taxonomy",
    type=click.Path(dir_okay=False),
    help="Topic taxonomy TOML file (default: the packaged one).",
)
@click.option(
    "--full-refresh", is_flag=True, help="Delete all papers and reload every source from scratch."
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=default_workers,
    show_default="the machine's cores",
    help="Processes for the transform stage.",
)
@click.option(
    "--wait",
    is_flag=True,
    help="If another run holds the database, wait for it instead of exiting.",
)
@click.option(
    "--shard",
    metavar="I/N",
    callback=lambda _ctx, _param, value: _parse_shard(value),
    help="Load only shard I of N of the sorted files (loaders sharing a corpus each take "
    "one; give them all the same paths).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@handle_errors
def run_command(
    paths: tuple[str, ...],
    database: str | None,
    venue: str | None,
    year: int | None,
    taxonomy: str | None,
    full_refresh: bool,
    workers: int,
    wait: bool,
    shard: tuple[int, int] | None,
    quiet: bool,
) -> None:
    """Load paper lists into the database.

    PATH may be a file, a folder or a glob of plain-text abstract lists (.txt), JSON, JSON Lines
    or CSV exports. With no PATH, the packaged sample lists (ICML 2025) are loaded. Unchanged
    files are skipped; each file is loaded in one transaction.

    Exit status: 0 all loaded; 1 error, nothing loaded; 3 loaded, but some files failed or
    records were rejected (see the `rejects` table).
    """
    from etl.pipeline import RunOptions, run

    stop_on_sigterm()
    options = RunOptions(
        paths=paths,
        database_url=database,
        venue=venue,
        year=year,
        taxonomy=taxonomy,
        full_refresh=full_refresh,
        workers=workers,
        wait=wait,
        shard=shard,
    )
    show = not quiet and err.is_terminal
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files · {task.fields[records]:,} records"),
        TimeElapsedColumn(),
        console=err,
        disable=not show,
        transient=True,
    ) as progress:
        task = progress.add_task("Loading", total=None, records=0)

        def on_progress(event: str, count: int) -> None:
            if event == "source":
                progress.advance(task, count)
            else:
                progress.update(task, records=progress.tasks[task].fields["records"] + count)

        report = run(options, on_progress)
    print_report(report)
    if report.status != "succeeded":
        sys.exit(EXIT_PARTIAL)


def _parse_shard(value: str | None) -> tuple[int, int] | None:
    """`I/N` as (I, N), with 1 <= I <= N."""
    if value is None:
        return None
    index, _, count = value.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise click.BadParameter(f"expected I/N with 1 <= I <= N, got {value!r}")
    return int(index), int(count)


def print_report(report: RunReport) -> None:
    """The run summary: sources, papers, links, methods, rejects, seconds (per stage too)."""
    out = Console(highlight=False, soft_wrap=True)
    for source in report.sources:
        if source.status == "failed":
            out.print(f"[red]failed[/]   {source.message}")
        elif source.status == "ignored":
            out.print(f"[yellow]ignored[/]  {source.path}: {source.message}")
        elif source.rejects:
            rejected = f"{source.rejects} of {source.records} records rejected"
            out.print(f"[yellow]rejects[/]  {source.path}: {rejected}")
    out.print(
        f"Run {report.run_id} {report.status} → {report.database}\n"
        f"  sources  {report.sources_loaded} loaded, {report.sources_skipped} unchanged "
        f"(skipped), {report.sources_failed} failed\n"
        f"  papers   {report.papers_inserted} inserted, {report.papers_updated} updated, "
        f"{report.papers_unchanged} unchanged, {report.papers_removed} removed\n"
        f"  written  {report.links} paper links, {report.methods} paper methods\n"
        f"  rejects  {report.rejects}\n"
        f"  seconds  {report.seconds:.2f} ("
        + ", ".join(f"{k} {v:.2f}" for k, v in report.stage_seconds.items())
        + ")"
    )
    if (
        report.papers_inserted + report.papers_updated + report.papers_removed == 0
        and report.sources_failed == 0
    ):
        out.print("  nothing changed")


@main.command("search")
@click.argument("query")
@click.option(
    "--limit", "-n", type=click.IntRange(min=1), default=10, show_default=True, help="Rows to show."
)
@db_option
@format_option
@handle_errors
def search_command(query: str, limit: int, database: str | None, fmt: str) -> None:
    """Full-text search over titles, abstracts and method names, best match first.

    Words are ANDed; "quoted phrases" match exactly; OR between words; -word excludes.
    """
    from etl import read

    engine = read.open_reader(resolve_database_url(database))
    try:
        rows = read.search(engine, query, limit)
    finally:
        engine.dispose()
    if not rows.rows and fmt == "table":
        err.print(f"No papers match {query!r}.")
        return
    render(rows, fmt, Console(highlight=False))


@main.command("query")
@click.argument("sql")
@db_option
@format_option
@handle_errors
def query_command(sql: str, database: str | None, fmt: str) -> None:
    """Run one read-only SQL statement and print its rows.

    Example: etl query "SELECT * FROM papers_with_code"
    """
    from etl import read

    engine = read.open_reader(resolve_database_url(database))
    try:
        rows = read.run_query(engine, sql)
    finally:
        engine.dispose()
    render(rows, fmt, Console(highlight=False))


@main.command("views")
@format_option
def views_command(fmt: str) -> None:
    """List the packaged SQL views with their descriptions."""
    from etl import read

    render(read.views(), fmt, Console(highlight=False))


@main.command("stats")
@db_option
@format_option
@handle_errors
def stats_command(database: str | None, fmt: str) -> None:
    """Counts per table, per venue and per topic, and the last run."""
    from etl import read

    url = resolve_database_url(database)
    engine = read.open_reader(url)
    try:
        sections = read.stats(engine)
    finally:
        engine.dispose()
    console = Console(highlight=False)
    if fmt == "json":
        import json

        from etl.output import plain

        payload = {
            name: [dict(zip(rows.columns, map(plain, row), strict=True)) for row in rows.rows]
            for name, rows in sections.items()
        }
        payload["database"] = mask_url(url)  # type: ignore[assignment]
        console.file.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    for name, rows in sections.items():
        if fmt == "csv":
            console.file.write(f"# {name}\n")
        render(rows, fmt, console, title=name)


@main.command("eval")
@click.argument("gold_file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--taxonomy",
    type=click.Path(exists=True, dir_okay=False),
    help="Topic taxonomy TOML file (default: the packaged one).",
)
@format_option
@handle_errors
def eval_command(gold_file: str, taxonomy: str | None, fmt: str) -> None:
    """Measure extraction against hand-made gold annotations (JSON Lines).

    Runs the transform over each gold abstract and prints precision, recall and F1 for
    introduced methods, mentioned methods, acronyms, code links and topics.
    The format is documented in tests/gold/README.md.
    """
    from etl.evaluate import evaluate

    render(evaluate(gold_file, taxonomy), fmt, Console(highlight=False))


@main.command("grant-readonly")
@click.argument("role")
@click.option(
    "--password",
    envvar="ETL_READONLY_PASSWORD",
    help="Login password (or set ETL_READONLY_PASSWORD).",
)
@db_option
@handle_errors
def grant_readonly_command(role: str, password: str | None, database: str | None) -> None:
    """Create or update a PostgreSQL role for BI tools that can read and not write.

    The role may SELECT from every table and view (also ones created later) and gets
    `permission denied` for INSERT, UPDATE, DELETE and CREATE.
    """
    from etl.admin import grant_read_only
    from etl.load import create_db_engine

    url = resolve_database_url(database)
    engine = create_db_engine(url)
    try:
        created = grant_read_only(engine, role, password)
    finally:
        engine.dispose()
    click.echo(f"{'Created' if created else 'Updated'} read-only role {role} on {mask_url(url)}")


@main.command("serve")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8001, show_default=True)
@handle_errors
def serve_command(database: str | None, host: str, port: int) -> None:
    """Browse the database in Datasette, read-only (SQLite only; needs the `serve` extra).

    Views, tables and columns carry the same descriptions as the PostgreSQL comments; ready-made
    queries, facets and full-text search on `papers` are set up. Listens on the loopback
    address unless --host says otherwise; Ctrl-C stops it.
    """
    from etl.serve import serve, sqlite_path

    url = resolve_database_url(database)
    sqlite_path(url)  # refuse PostgreSQL or a missing file before printing the address
    err.print(f"Serving {mask_url(url)} read-only at http://{host}:{port}/ (Ctrl-C to stop)")
    serve(url, host, port)


@main.command("report")
@db_option
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    default="report.html",
    show_default=True,
    help="HTML file to write.",
)
@handle_errors
def report_command(database: str | None, output: str) -> None:
    """Write one self-contained HTML report with charts (opens offline; needs the `report` extra).

    Papers and code per venue and year, topics, the most introduced and mentioned methods,
    who builds on whom, code hosts and the most defined acronyms. SQLite or PostgreSQL.
    """
    from pathlib import Path

    from etl import read
    from etl.report import write_report

    engine = read.open_reader(resolve_database_url(database))
    try:
        size = write_report(engine, Path(output))
    finally:
        engine.dispose()
    click.echo(f"Wrote {output} ({size / 1024:,.0f} KB)")
