"""The `etl` command: thin click wrappers over the library; errors become `Error: ...`.

Commands import the library (SQLAlchemy, Alembic) when they run, not with this module: the
transform's worker processes start by importing the main script (multiprocessing's `spawn`),
which for the `etl` command is this module, and each would otherwise carry all of it.
"""

from __future__ import annotations

import functools
import os
import sys
import textwrap
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from etl import __version__
from etl.config import mask_url, resolve_database_url, scrub
from etl.errors import EtlError, not_utf8, shown_bytes
from etl.extract import FORMATS as SHAPES
from etl.extract.limits import DEFAULT as DEFAULT_LIMITS
from etl.extract.limits import Limits
from etl.models import CHANGE_KINDS, RunReport
from etl.output import FORMATS, make_console, render, visible
from etl.parallel import default_workers
from etl.signals import stop_on_sigterm

if TYPE_CHECKING:
    from etl.progress import ProgressCallback

F = TypeVar("F", bound=Callable[..., Any])

# Exit statuses (documented in docs/security.md): click itself exits 2 for a usage error.
EXIT_ERROR = 1  # an error: one `Error: ...` line on stderr
EXIT_PARTIAL = 3  # the run finished, but some records or files were rejected
EXIT_INTERNAL = 70  # a failure etl does not know (a bug): `--debug` shows the traceback
EXIT_INTERRUPTED = 130

err = make_console(stderr=True)


SIZE_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}


def _parse_size(_ctx: click.Context, _param: click.Parameter, value: Any) -> int:
    """A positive count with an optional K, M or G suffix (powers of 1024): `16M`."""
    if isinstance(value, int):
        return value
    text = str(value).strip().lower().removesuffix("b")
    number, unit = (text[:-1], text[-1]) if text[-1:] in SIZE_UNITS else (text, "")
    if not number.isdigit() or int(number) < 1:
        raise click.BadParameter(
            f"expected a positive number with an optional K, M or G suffix, got {value!r}"
        )
    return int(number) * SIZE_UNITS[unit]


def handle_errors(func: F) -> F:
    """Print any failure as one `Error: ...` line and exit 1 (70 for a bug); Ctrl-C exits 130.

    Database and file-system exceptions are named by `etl.failures.describe`; the traceback is
    printed only with `etl --debug` or ETL_DEBUG=1.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except KeyboardInterrupt:
            err.print("Interrupted: sources already committed are kept; rerun to finish.")
            # Everything is rolled back or committed and recorded: exit now, without the
            # interpreter's final sweep of a large heap (seconds after a long run).
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:
            if _debugging():
                traceback.print_exc()
            sys.exit(_report_error(exc, kwargs.get("database")))

    return wrapper  # type: ignore[return-value]


def _undecodable(exc: Exception) -> bool:
    """A name or argument holding bytes that are not UTF-8 reached a database or file: bad
    input, not a bug (its message shows the bytes escaped)."""
    return isinstance(exc, UnicodeEncodeError) and "surrogates not allowed" in str(exc)


def utf8_text(value: str, what: str) -> str:
    """The argument, or a usage error when it holds bytes that are not UTF-8 (the shell passes
    them as surrogates, which no database accepts)."""
    if not_utf8(value):
        raise click.UsageError(f"{what} is not valid UTF-8 text: {visible(shown_bytes(value))}")
    return value


def _debugging() -> bool:
    """`etl --debug`, or ETL_DEBUG set to anything but empty or 0."""
    context = click.get_current_context(silent=True)
    flag = bool(context and context.find_root().params.get("debug"))
    return flag or os.environ.get("ETL_DEBUG", "") not in {"", "0"}


def _report_error(exc: Exception, database: str | None) -> int:
    """Print the one-line message for a failure; the exit status it deserves."""
    from etl.failures import describe, is_database_failure

    try:
        url: str | None = resolve_database_url(database)
    except Exception:  # the URL is what failed: the message names it, not the URL
        url = None
    known = isinstance(exc, EtlError) or is_database_failure(exc) or _undecodable(exc)
    message = str(describe(exc, url)) if known else f"{type(exc).__name__}: {exc}"
    line = visible(scrub(" ".join(message.split())))
    if known:
        err.print(f"[red]Error:[/] {escape(line)}")
        return EXIT_ERROR
    hint = "" if _debugging() else " (run `etl --debug ...` for the traceback)"
    err.print(f"[red]Error:[/] unexpected failure, please report it: {escape(line)}{hint}")
    return EXIT_INTERNAL


db_option = click.option(
    "--db",
    "database",
    metavar="URL",
    help="Database URL, or the path of a .db/.sqlite/.sqlite3 file (default: "
    "$ETL_DATABASE_URL, else sqlite:///papers.db). PostgreSQL: postgresql+psycopg://USER@HOST/DB.",
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
@click.option("--debug", is_flag=True, help="Print the traceback of a failure (also: ETL_DEBUG=1).")
def main(debug: bool) -> None:
    """Turn conference paper lists into a queryable SQLite or PostgreSQL database.

    `etl run` loads paper lists; `etl search`, `etl query`, `etl stats` and `etl views` read.

    Exit status: 0 done; 1 an error (one `Error:` line); 2 a usage error; 3 `etl run`
    finished but some files failed or records were rejected; 70 an unexpected failure (a bug);
    130 interrupted.
    """


def _run_help() -> str:
    """`etl run`'s description, listing the input shapes the extract stage registers."""
    width = max(map(len, SHAPES))
    shapes = "\n".join(f"  {name:<{width}}  {what}" for name, what in SHAPES.items())
    return f"""Load paper lists and metadata files into the database.

    PATH may be a file, a folder or a glob. Each file's shape is read from its content
    (gzip, bzip2, xz, zstd and zip members too); --source-format names it when the content
    cannot tell. With no PATH, the packaged sample lists (ICML 2025) are loaded. Unchanged
    files are skipped; each file is loaded in one transaction. The shapes:

    \b
{textwrap.indent(shapes, "    ")}

    Exit status: 0 all loaded; 1 error, nothing loaded; 3 loaded, but some files failed or
    records were rejected (see the `rejects` table).

    A record past --max-depth, --max-record-size, --max-field-size or --max-values is
    rejected; a file that cannot be read within them fails alone, as does a compressed file
    that expands past --max-expansion or --max-expanded-size, and a file whose rejects pass
    --max-rejects and outnumber its records.
    """


@main.command("run", help=_run_help())
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@db_option
@click.option("--venue", help="Venue for every record (overrides headers and file names).")
@click.option("--year", type=int, help="Year for every record (overrides headers and file names).")
@click.option(
    "--taxonomy",
    type=click.Path(dir_okay=False),
    help="Taxonomy TOML file: [[topic]] and [[task]] tables (default: the packaged ones).",
)
@click.option(
    "--tagger",
    type=click.Choice(["model", "rules"]),
    default="model",
    show_default=True,
    help="Topics and tasks by the learned tagger, or by the term rules alone.",
)
@click.option(
    "--venues",
    type=click.Path(dir_okay=False),
    help="TOML file of venues and their spellings, added to the packaged ones.",
)
@click.option(
    "--full-refresh", is_flag=True, help="Delete all papers and reload every source from scratch."
)
@click.option(
    "--prune",
    is_flag=True,
    help=(
        "Forget the gone sources PATH names (a file, the files under a folder, those a glob "
        "matches; a zip member when its archive is gone or no longer holds it): their papers "
        "leave unless seen elsewhere."
    ),
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
@click.option(
    "--max-depth",
    type=click.IntRange(min=1),
    default=DEFAULT_LIMITS.depth,
    show_default=True,
    help="Levels of nesting a record may have (deeper records are rejected).",
)
@click.option(
    "--max-record-size",
    metavar="SIZE",
    callback=_parse_size,
    default="16M",
    show_default=True,
    help="Characters one record (a line, a CSV row, a JSON record) may have; K, M, G suffixes.",
)
@click.option(
    "--max-field-size",
    metavar="SIZE",
    callback=_parse_size,
    default="1M",
    show_default=True,
    help="Characters one field may have; K, M, G suffixes.",
)
@click.option(
    "--max-values",
    type=click.IntRange(min=1),
    default=DEFAULT_LIMITS.values,
    show_default=True,
    help="Values one record may hold: each string, number, key, list and object counts one.",
)
@click.option(
    "--max-expansion",
    type=click.IntRange(min=1),
    default=DEFAULT_LIMITS.expansion,
    show_default=True,
    help="Times its own size a compressed file (or zip member) may expand to, past its first "
    "64M; a file that expands further fails.",
)
@click.option(
    "--max-expanded-size",
    metavar="SIZE",
    callback=_parse_size,
    default="64G",
    show_default=True,
    help="Bytes a compressed file (or zip member) may expand to; K, M, G suffixes.",
)
@click.option(
    "--max-rejects",
    type=click.IntRange(min=1),
    default=DEFAULT_LIMITS.rejects,
    show_default=True,
    help="Rejects a file may have when they outnumber its records; past them it fails "
    "(its first rejects are kept).",
)
@click.option(
    "--source-format",
    metavar="NAME",
    help="The shape of every file, for files whose content is ambiguous: "
    + ", ".join(SHAPES)
    + " (default: from each file's content).",
)
@click.option(
    "--dask",
    metavar="ADDRESS",
    help="Load the sources on a Dask cluster: its scheduler's address (tcp://HOST:8786), or "
    "local / local:N for N worker processes here. PostgreSQL only; needs the dask extra.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@handle_errors
def run_command(
    paths: tuple[str, ...],
    database: str | None,
    venue: str | None,
    year: int | None,
    taxonomy: str | None,
    tagger: str,
    venues: str | None,
    full_refresh: bool,
    prune: bool,
    workers: int,
    wait: bool,
    shard: tuple[int, int] | None,
    max_depth: int,
    max_record_size: int,
    max_field_size: int,
    max_values: int,
    max_expansion: int,
    max_expanded_size: int,
    max_rejects: int,
    source_format: str | None,
    dask: str | None,
    quiet: bool,
) -> None:
    """Load paper lists and metadata files (the description is `_run_help`'s)."""
    from etl.pipeline import RunOptions, run

    stop_on_sigterm()
    options = RunOptions(
        paths=paths,
        database_url=database,
        venue=venue,
        year=year,
        taxonomy=taxonomy,
        tagger=tagger,
        venues=venues,
        full_refresh=full_refresh,
        prune=prune,
        workers=workers,
        wait=wait,
        shard=shard,
        limits=Limits(
            depth=max_depth,
            record_size=max_record_size,
            field_size=max_field_size,
            values=max_values,
            expansion=max_expansion,
            expanded_size=max_expanded_size,
            rejects=max_rejects,
        ),
        source_format=source_format,
        dask=dask,
    )
    show = not quiet and err.is_terminal
    progress, on_progress = run_progress(err, show)
    with progress:
        report = run(options, on_progress)
    print_report(report)
    if report.status != "succeeded":
        sys.exit(EXIT_PARTIAL)


def run_progress(
    console: Console, show: bool, clock: Callable[[], float] | None = None
) -> tuple[Progress, ProgressCallback]:
    """The run's progress display and the callback that moves it: the bytes read of all the
    files (the bar, and the estimate of the time left from how fast they are read), files
    done and records written. `clock`: the display's time (the monotonic clock)."""
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[done]}/{task.fields[files]} files"),
        TextColumn("· {task.fields[records]:,} records ·"),
        TimeElapsedColumn(),
        TextColumn("· left"),
        TimeRemainingColumn(),
        console=console,
        disable=not show,
        transient=True,
        get_time=clock,
    )
    task = progress.add_task("Loading", total=None, records=0, done=0, files="?")

    def on_progress(event: str, count: int) -> None:
        fields = progress.tasks[task].fields
        if event == "bytes":
            progress.update(task, total=count)
        elif event == "read":
            progress.advance(task, count)
        elif event == "files":
            progress.update(task, files=count)
        elif event == "source":
            progress.update(task, done=fields["done"] + count)
        elif event == "records":
            progress.update(task, records=fields["records"] + count)

    return progress, on_progress


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
    out = Console(highlight=False, soft_wrap=True, emoji=False)
    for source in report.sources:
        path, message = escape(visible(source.path)), escape(visible(source.message or ""))
        if source.status == "failed":
            out.print(f"[red]failed[/]   {message}")
        elif source.status == "ignored":
            out.print(f"[yellow]ignored[/]  {path}: {message}")
        elif source.status == "pruned":
            out.print(f"[yellow]pruned[/]   {path}: {message}")
        elif source.moved_from is not None:
            out.print(f"[cyan]moved[/]    {path}: {message}")
        if source.rejects and source.status != "failed":
            rejected = f"{source.rejects} of {source.records} records rejected"
            out.print(f"[yellow]rejects[/]  {path}: {rejected}")
    out.print(
        f"Run {report.run_id} {report.status} → {escape(visible(report.database))}\n"
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


class SearchCommand(click.Command):
    """`etl search` reads a word starting with `-` as an excluded term, never as an option.

    Click would read `-cache` as the short options -c -a -c -h -e (-h: help). Only this
    command's own options are options; every other word is part of the search.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Move the search words behind `--`, keeping the command's options in front."""
        names = {name for param in self.get_params(ctx) for name in param.opts}
        takes_value = {
            name
            for param in self.get_params(ctx)
            if isinstance(param, click.Option) and not param.is_flag
            for name in param.opts
        }
        options: list[str] = []
        words: list[str] = []
        tokens = iter(args)
        for token in tokens:
            if token == "--":
                words.extend(tokens)
            elif token in takes_value:
                options += [token, next(tokens, "")]
            elif token in names or token.split("=", 1)[0] in takes_value:
                options.append(token)
            else:
                words.append(token)
        return super().parse_args(ctx, [*options, "--", *words])


@main.command("search", cls=SearchCommand)
@click.argument("query", nargs=-1, required=True)
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(min=1, max=1000),
    default=10,
    show_default=True,
    help="Rows to show (at most 1000).",
)
@db_option
@format_option
@handle_errors
def search_command(query: tuple[str, ...], limit: int, database: str | None, fmt: str) -> None:
    """Full-text search over titles, abstracts and method names, best match first.

    Words are ANDed; "quoted phrases" match exactly; OR between words or phrases; -word or
    -"phrase" excludes (`etl search cache -quantization` needs no `--`). At most 32 terms and
    500 characters.
    """
    from etl import read

    text = utf8_text(" ".join(query), "the search")
    engine = read.open_reader(resolve_database_url(database))
    try:
        rows = read.search(engine, text, limit)
    finally:
        engine.dispose()
    if not rows.rows and fmt == "table":
        err.print(f"No papers match {escape(visible(repr(text[:200])))}.")
        return
    render(rows, fmt, make_console())


@main.command("query", context_settings={"ignore_unknown_options": True})
@click.argument("sql")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1, max=86_400),
    default=30.0,
    show_default=True,
    help="Seconds the statement may run before it is stopped.",
)
@click.option(
    "--allow-superuser",
    is_flag=True,
    help="PostgreSQL: run even when connected as a superuser (who can read server files).",
)
@click.option(
    "--max-rows",
    type=click.IntRange(min=0),
    default=10_000,
    show_default=True,
    help="Rows printed at most (0: all); a cut result says so on stderr.",
)
@click.option(
    "--max-bytes",
    metavar="SIZE",
    callback=lambda ctx, param, value: 0 if str(value) == "0" else _parse_size(ctx, param, value),
    default="64M",
    show_default=True,
    help="Bytes of values read at most, K, M, G suffixes (0: all); a cut result says so.",
)
@db_option
@format_option
@handle_errors
def query_command(
    sql: str,
    timeout: float,
    allow_superuser: bool,
    max_rows: int,
    max_bytes: int,
    database: str | None,
    fmt: str,
) -> None:
    """Run one read-only SQL statement and print its rows.

    One statement that reads (SELECT, WITH, VALUES, TABLE, EXPLAIN without ANALYZE, SHOW on
    PostgreSQL), in a read-only transaction, stopped after --timeout seconds. On PostgreSQL a
    superuser connection is refused unless --allow-superuser is given.

    Example: etl query "SELECT * FROM papers_with_code"
    """
    from etl import read

    sql = utf8_text(sql, "the SQL statement")
    engine = read.open_reader(resolve_database_url(database))
    bound = read.Bound(max_rows, max_bytes)
    try:
        rows = read.run_query(
            engine, sql, timeout=timeout, allow_superuser=allow_superuser, bound=bound
        )
    finally:
        engine.dispose()
    render(rows, fmt, make_console())
    if rows.cut:
        err.print(f"Note: {escape(rows.cut)}", soft_wrap=True)


@main.command("related")
@click.argument("paper")
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(min=1, max=10),
    default=10,
    show_default=True,
    help="Related papers to show (the best ten are kept per paper).",
)
@db_option
@format_option
@handle_errors
def related_command(paper: str, limit: int, database: str | None, fmt: str) -> None:
    """Papers related to PAPER (its id, DOI, arXiv id or title), best first, with why: one
    cites the other, works both cite, papers citing both, methods and tasks they share (the
    related_papers view).

    Example: etl related 10.5555/torch.2020.3
    """
    from etl import read, related

    engine = read.open_reader(resolve_database_url(database))
    try:
        label, rows = related.related(engine, utf8_text(paper, "the paper"), limit)
    finally:
        engine.dispose()
    if not rows.rows and fmt == "table":
        shown = escape(visible(label))
        err.print(f"No papers related to {shown} (no citations or methods in common).")
        return
    if fmt == "table":  # what fits a terminal; json and csv carry every column
        rows = read.Rows(
            ("rank", "score", "paper", "venue", "year", "why"),
            tuple((r[0], r[5], r[2], r[3], r[4], r[6]) for r in rows.rows),
        )
    render(rows, fmt, make_console())


@main.command("views")
@db_option
@format_option
@handle_errors
def views_command(database: str | None, fmt: str) -> None:
    """List the views in the database with their descriptions."""
    from etl import read

    engine = read.open_reader(resolve_database_url(database))
    try:
        rows = read.views(engine)
    finally:
        engine.dispose()
    render(rows, fmt, make_console())


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
    console = make_console()
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


def _parse_since(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Any:
    """A run number (the runs after it), or a date or time (ISO 8601, UTC: from then on)."""
    if value is None:
        return None
    if value.strip().isdigit():
        return int(value)
    from datetime import datetime

    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise click.BadParameter(
            f"{visible(value[:100])!r} is neither a run number nor a date (2026-12-01, "
            "2026-12-01T08:00)"
        ) from None
    if parsed.tzinfo is not None:
        from datetime import UTC

        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


@main.command("changes")
@click.option("--run", "run_id", type=click.IntRange(min=1), help="Only this run's changes.")
@click.option(
    "--since",
    metavar="DATE|RUN",
    callback=_parse_since,
    help="Changes after run RUN, or from DATE on (ISO 8601, UTC: 2026-12-01, 2026-12-01T08:00).",
)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(CHANGE_KINDS),
    help="Only changes of this kind (repeat for several).",
)
@click.option("--venue", help="Only changes to papers of this venue (any case).")
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(min=1, max=100_000),
    default=1000,
    show_default=True,
    help="Rows to show, newest first.",
)
@db_option
@format_option
@handle_errors
def changes_command(
    run_id: int | None,
    since: int | Any | None,
    kinds: tuple[str, ...],
    venue: str | None,
    limit: int,
    database: str | None,
    fmt: str,
) -> None:
    """What loads changed, newest first: papers added, removed and changed (title, abstract,
    authors, venue, year, status), sightings and code or project links added or removed.

    Example: etl changes --since 2026-12-01 --kind link_added --venue ICML
    """
    from etl import read

    wanted = read.ChangeFilter(
        run=run_id,
        since_run=since if isinstance(since, int) else None,
        since=None if since is None or isinstance(since, int) else since,
        kinds=kinds,
        venue=venue,
        limit=limit,
    )
    engine = read.open_reader(resolve_database_url(database))
    try:
        rows = read.changes(engine, wanted)
    finally:
        engine.dispose()
    if not rows.rows and fmt == "table":
        err.print("No changes match.")
        return
    if fmt == "table":  # what fits a terminal; json and csv carry every column
        rows = read.Rows(
            ("run", "at", "kind", "field", "old", "new", "paper"),
            tuple(
                (run, str(at)[:19], kind, field, old, new, label)
                for _, run, at, kind, field, old, new, _id, label, *_ in rows.rows
            ),
        )
    render(rows, fmt, make_console())


@main.command("eval")
# Not `exists=True`: a missing gold file is the library's GoldFileError (`Error:`, exit 1).
@click.argument("gold_file", type=click.Path(dir_okay=False))
@click.option(
    "--taxonomy",
    type=click.Path(exists=True, dir_okay=False),
    help="Taxonomy TOML file: [[topic]] and [[task]] tables (default: the packaged ones).",
)
@click.option(
    "--tagger",
    type=click.Choice(["model", "rules"]),
    default="model",
    show_default=True,
    help="Topics and tasks by the learned tagger, or by the term rules alone.",
)
@click.option(
    "--misses", is_flag=True, help="Also print every spurious and missed item, per record."
)
@format_option
@handle_errors
def eval_command(gold_file: str, taxonomy: str | None, tagger: str, misses: bool, fmt: str) -> None:
    """Measure extraction against hand-made gold annotations (JSON Lines).

    Runs the transform over each gold abstract and prints precision, recall and F1 for
    introduced methods, mentioned methods, acronyms, code links, topics and tasks.
    The format is documented in tests/gold/README.md.
    """
    from etl.evaluate import evaluate_details, summarize
    from etl.evaluate import misses as miss_lines

    results = evaluate_details(gold_file, taxonomy, tagger)
    console = make_console()
    if misses:
        # beside a table on stdout; on stderr when stdout is JSON or CSV for a program to read
        out = console if fmt == "table" else err
        for line in miss_lines(results):
            out.print(line, markup=False, soft_wrap=True)
    render(summarize(results), fmt, console)


@main.command("grant-readonly")
@click.argument("role")
@click.option(
    "--password",
    envvar="ETL_READONLY_PASSWORD",
    help="Login password (or set ETL_READONLY_PASSWORD).",
)
@click.option(
    "--strip-attributes",
    is_flag=True,
    help="An existing role with SUPERUSER, CREATEDB, CREATEROLE, REPLICATION or BYPASSRLS "
    "loses them (each change is printed); without this flag such a role is refused.",
)
@db_option
@handle_errors
def grant_readonly_command(
    role: str, password: str | None, strip_attributes: bool, database: str | None
) -> None:
    """Create or update a PostgreSQL role for BI tools that can read and not write.

    The role may SELECT from every table and view (also ones created later) and nothing else:
    the documentation's security page (docs/security.md) says exactly what it can and cannot do.
    """
    from etl.admin import grant_read_only
    from etl.config import remember_secret
    from etl.load import create_db_engine

    if password:
        remember_secret(password)
    url = resolve_database_url(database)
    engine = create_db_engine(url)
    try:
        result = grant_read_only(engine, role, password, strip_attributes=strip_attributes)
    finally:
        engine.dispose()
    for change in result.changes:
        click.echo(f"Changed: {change}")
    verb = "Created" if result.created else "Updated"
    click.echo(f"{verb} read-only role {role} on {mask_url(url)}")


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
