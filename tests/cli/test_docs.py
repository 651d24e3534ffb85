"""The documentation tells the truth: its commands run, its references cover the CLI, its
pictures exist, and the site builds with warnings as errors."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from etl.cli import main
from tests.helpers import POSTGRES_ADMIN_URL, etl
from tools import docs_reference

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").glob("**/*.md")])
NEEDS = re.compile(r"<!--\s*needs:\s*([\w ,-]+?)\s*-->")
SHELL_BLOCK = re.compile(r"^```(?:bash|sh|shell|console)\n(.*?)^```", re.M | re.S)
# `etl` as a command: at a line's start or after && ; | (after any VAR=value assignments).
ETL_WORD = re.compile(r"(?:^|&&|;|\|)\s*(?:\w+=\S+\s+)*etl\s")


@dataclass(frozen=True)
class Block:
    """A shell block of a page: where it is, what it needs beyond the sample, its lines."""

    page: Path
    line: int
    needs: str | None
    lines: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def etl_commands(self) -> list[list[str]]:
        """The block's `etl` command lines as argument lists (comments and continuations
        resolved as the shell would)."""
        text = "\n".join(self.lines).replace("\\\n", " ")
        words = (shlex.split(line, comments=True) for line in text.splitlines())
        return [w for w in words if w and w[0] == "etl"]


def shell_blocks() -> list[Block]:
    blocks = []
    for page in PAGES:
        text = page.read_text("utf-8")
        for match in SHELL_BLOCK.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            needs = NEEDS.search(before)
            blocks.append(
                Block(
                    page,
                    text.count("\n", 0, match.start()) + 1,
                    needs.group(1) if needs else None,
                    tuple(match.group(1).splitlines()),
                )
            )
    return blocks


BLOCKS = shell_blocks()
RUNNABLE = [b for b in BLOCKS if b.needs is None and b.etl_commands()]


def test_the_pages_hold_runnable_etl_commands() -> None:
    """The extraction below finds the README's tour (so an empty match cannot pass)."""
    readme = [b for b in RUNNABLE if b.page.name == "README.md"]
    commands = {c[1] for b in readme for c in b.etl_commands()}
    assert {"run", "search", "query", "stats", "views", "report"} <= commands


def test_an_etl_command_that_cannot_run_as_written_is_marked() -> None:
    """A line that runs `etl` inside a shell construct (`pip install . && etl run`) or with a
    variable in front is not run by the test: its block must say what it needs instead."""
    for block in BLOCKS:
        if block.needs:
            continue
        for line in block.lines:
            code = line.split("#", 1)[0]
            if ETL_WORD.search(code):
                assert code.lstrip().startswith("etl "), (
                    f"{block.name}: `{line.strip()}` runs etl in a way the docs test cannot;"
                    " mark the block with <!-- needs: WHAT --> on the line before it"
                )


@pytest.fixture(scope="module")
def loaded_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder as the README's step 1 leaves it: the sample loaded into ./papers.db, and the
    repository's sample lists beside it (`etl run seeds`)."""
    folder = tmp_path_factory.mktemp("sample")
    shutil.copytree(ROOT / "seeds", folder / "seeds")
    loaded = etl("run", "-q", cwd=folder)
    assert loaded.returncode == 0, loaded.stderr
    return folder


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.name)
@pytest.mark.slow
def test_every_etl_command_of_the_docs_runs_on_the_sample(
    block: Block, loaded_sample: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "here"
    shutil.copytree(loaded_sample, folder)
    for command in block.etl_commands():
        done = etl(*command[1:], cwd=folder)
        assert done.returncode == 0, f"{block.name}: {shlex.join(command)}\n{done.stderr}"
        assert "Error:" not in done.stderr


POSTGRES_URL = re.compile(r"postgresql\+psycopg://\S+")


@pytest.fixture
def docs_role(postgres_url: str) -> Iterator[str]:
    """A role name standing for the pages' `bi_reader`, dropped afterwards if it was made."""
    role = f"etl_docs_reader_{uuid.uuid4().hex[:8]}"
    yield role
    for url, statement in [
        (postgres_url, f'DROP OWNED BY "{role}"'),
        (POSTGRES_ADMIN_URL, f'DROP ROLE "{role}"'),
    ]:
        engine = create_engine(url, isolation_level="AUTOCOMMIT")
        with engine.connect() as connection:
            exists = connection.execute(
                text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}
            ).first()
            if exists:
                connection.execute(text(statement))
        engine.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.needs == "postgres"], ids=lambda b: b.name
)
@pytest.mark.slow
def test_every_etl_command_of_the_postgres_blocks_runs_against_the_server(
    block: Block, loaded_sample: Path, tmp_path: Path, postgres_url: str, docs_role: str
) -> None:
    """The pages' placeholders stand for a fresh database, the sample's folder and a new role;
    `export` and `VAR=value` prefixes are kept; other lines (pip, createdb) are not run."""
    folder = tmp_path / "here"
    shutil.copytree(loaded_sample, folder)
    exported: dict[str, str] = {}
    ran = 0
    for line in block.lines:
        line = POSTGRES_URL.sub(lambda m: _as_user(m[0], postgres_url), line)
        line = line.replace("/data/lists", "seeds")
        words = shlex.split(line.replace("bi_reader", docs_role), comments=True)
        if words[:1] == ["export"]:
            name, value = words[1].split("=", 1)
            exported[name] = value
            continue
        prefix = {}
        while words and re.fullmatch(r"\w+=.*", words[0]):
            name, value = words.pop(0).split("=", 1)
            prefix[name] = value
        if words[:1] == ["etl"]:
            done = etl(*words[1:], cwd=folder, env={**exported, **prefix})
            assert done.returncode == 0, f"{block.name}: {line}\n{done.stderr}"
            ran += 1
    assert ran


def _as_user(written: str, postgres_url: str) -> str:
    """The test database's URL for a page's URL: as the page's read-only role when the page
    connects as `bi_reader`, else as the tests' own role."""
    if make_url(written).username != "bi_reader":
        return postgres_url
    return make_url(postgres_url).set(username="bi_reader").render_as_string(hide_password=False)


# Pages whose queries read a history of several loads: on the sample, loaded once, they run
# but find nothing.
HISTORY_PAGES = {"changes.md"}


def test_every_example_query_of_the_pages_runs_on_the_sample(loaded_sample: Path) -> None:
    """The SQL blocks (written for SQLite where the dialects differ) run; most find rows (the
    sample has no paper on Named Entity Recognition, and one load has no change history)."""
    statements = [
        (page.name in HISTORY_PAGES, statement)
        for page in PAGES
        for block in re.findall(r"^```sql\n(.*?)^```", page.read_text("utf-8"), re.M | re.S)
        for statement in block.split(";")
        if re.sub(r"--[^\n]*", "", statement).strip()
    ]
    assert len(statements) >= 7
    with sqlite3.connect(loaded_sample / "papers.db") as connection:
        found = [
            bool(connection.execute(statement).fetchall())
            for history, statement in statements
            if not history
        ]
        for history, statement in statements:
            if history:
                connection.execute(statement).fetchall()
    assert sum(found) >= len(found) - 1, found


def test_marked_blocks_name_what_they_need() -> None:
    """Only the reasons the docs test cannot meet may skip a block (`cluster`: several
    processes or machines at once, a Dask scheduler)."""
    allowed = {"postgres", "serve", "install", "cluster"}
    for block in BLOCKS:
        if block.needs:
            assert set(re.split(r"[ ,]+", block.needs)) <= allowed, block.name


def cli_sections() -> dict[str, str]:
    page = docs_reference.cli_reference()
    parts = re.split(r"^## etl ?(\S*)\n", page, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_command_and_option_is_in_the_cli_reference() -> None:
    sections = cli_sections()
    assert set(sections) == {"", *main.commands}
    for name, command in [("", main), *main.commands.items()]:
        section = sections[name]
        for param in command.params:
            if isinstance(param, click.Option):
                for flag in [*param.opts, *param.secondary_opts]:
                    assert re.search(rf"(?<![\w-]){re.escape(flag)}\b", section), (name, flag)
            else:
                assert param.make_metavar(click.Context(command)) in section, (name, param.name)
        if command.help:
            assert command.help.split("\n")[0][:40] in section


def test_the_cli_reference_is_what_help_prints() -> None:
    """Never written twice: the page holds the command's own --help output."""
    printed = CliRunner().invoke(
        main, ["search", "--help"], terminal_width=docs_reference.HELP_WIDTH
    )
    assert printed.exit_code == 0
    assert printed.output.replace("Usage: main", "Usage: etl").strip() in cli_sections()["search"]


def test_every_table_view_and_commented_column_is_in_the_schema_reference() -> None:
    from etl.load.database import view_definitions
    from etl.load.schema import metadata

    page = docs_reference.schema_reference()
    for table in metadata.tables.values():
        assert f"### {table.name}\n" in page
        if table.comment:
            assert table.comment in page
        for column in table.columns:
            if column.comment:
                assert f"| `{column.name}` |" in page and column.comment in page
    for view in view_definitions("sqlite"):
        assert f"### {view.name}\n" in page and view.description in page
        for column, comment in view.column_comments.items():
            assert f"| `{column}` | {comment.replace('|', chr(92) + '|')} |" in page


def test_every_image_and_local_link_of_the_pages_exists() -> None:
    link = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
    generated = {ROOT / "docs" / path for path in docs_reference.PAGES}
    images = 0
    for page in PAGES:
        prose = re.sub(r"```.*?```|`[^`\n]*`", "", page.read_text("utf-8"), flags=re.S)
        for target in link.findall(prose):
            if re.match(r"\w+:", target):
                continue
            resolved = (page.parent / target).resolve()
            # Pages the site generates exist only there: the README (read on its own) and the
            # changelog must not link to them.
            in_site = page.is_relative_to(ROOT / "docs") and resolved in generated
            assert resolved.exists() or in_site, f"{page.name}: {target}"
            images += target.endswith(".png")
    assert images >= 4


def test_version_is_the_installed_package_version() -> None:
    printed = CliRunner().invoke(main, ["--version"])
    assert printed.exit_code == 0
    assert printed.output.strip() == f"etl, version {version('paper-list-etl')}"


def test_the_readme_is_short_and_starts_with_the_two_set_up_commands() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert len(readme.splitlines()) <= 200
    first_block = SHELL_BLOCK.search(readme)
    assert first_block is not None
    commands = [line for line in first_block.group(1).splitlines() if line.startswith("python3")]
    assert commands == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install . && etl run",
        'python3 -m venv .venv && . .venv/bin/activate && pip install ".[test]"'
        " && python -m pytest",
    ]


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    """What `.ci/run` runs once the docs extra is installed."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (.ci/run builds it)")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "reference" / "cli" / "index.html").exists()
