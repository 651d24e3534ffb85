"""In a real browser (headless Chromium through Selenium): `etl serve` and `etl report`.

Debian's `chromium` and `chromium-driver` are used as installed (nothing is downloaded).
Without them the tests skip with the reason, except under CI=true, where they fail.
With ETL_SCREENSHOTS=FOLDER set, they also save the screenshots the README and docs/ show.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from etl.report import SECTIONS
from tests.helpers import SEEDS, load

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1200,900",
)
# Made-up papers: one introduces a method that the two others build on.
BUILDS_ON = [
    {
        "title": "ZorbNet: Sparse Attention Without the Pain",
        "abstract": "We propose ZorbNet, a novel architecture for sparse attention. Code at https://gitlab.com/acme/zorbnet",
        "authors": ["Ada Zorb", "Béla Quux"],
    },
    {
        "abstract": "We build on ZorbNet and extend it to graphs, outperforming ZorbNet on three benchmarks."
    },
    {
        "abstract": "Our method improves ZorbNet with Rotary Position Embedding (RoPE) for long inputs."
    },
]


def browser_problem() -> str | None:
    """Why the browser tests cannot run here, or None."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).exists()]
    if missing:
        return f"{' and '.join(missing)} not installed (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return 'selenium is not installed (pip install ".[test]")'
    return memory_limit_problem()


def memory_limit_problem() -> str | None:
    """Why Chromium cannot start under this process's virtual-memory limit (`ulimit -v`), or
    None. Chromium reserves far more address space than it uses when it starts, and a limit
    that refuses the reservation kills it (SIGTRAP) before it can say why: so under a limit,
    it is tried once first."""
    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    if limit == resource.RLIM_INFINITY:
        return None
    try:
        tried = subprocess.run(
            [CHROMIUM, *CHROMIUM_FLAGS, "--dump-dom", "about:blank"],
            capture_output=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        return None  # it started: what went wrong is the tests' to say
    if tried.returncode >= 0:
        return None
    return (
        f"Error: Chromium cannot start under this virtual-memory limit (ulimit -v "
        f"{limit // 1024}, in KiB): it reserves more address space than that when it starts, "
        f"and was killed (signal {-tried.returncode}). Run the browser tests without the "
        f"limit (ulimit -v unlimited)"
    )


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Chromium with a fresh profile, driven by Debian's chromedriver."""
    problem = browser_problem()
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {problem}")
        pytest.skip(problem)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


CITATIONS = Path(__file__).parents[1] / "fixtures" / "sources" / "citations"


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The packaged sample, three made-up papers and made-up citing pages (so every section of
    the report has rows), in a SQLite file."""
    folder = tmp_path_factory.mktemp("browser-db")
    extra = folder / "democonf_2024.jsonl"
    extra.write_text("\n".join(json.dumps(r) for r in BUILDS_ON) + "\n", encoding="utf-8")
    url = f"sqlite:///{folder / 'papers.db'}"
    load(url, SEEDS, extra, CITATIONS)
    return url


@pytest.fixture(scope="module")
def server(database: str) -> Iterator[str]:
    """`etl serve` running as a subprocess; yields its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "etl", "serve", "--db", database, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/-/versions.json", timeout=5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    message = process.stderr.read().decode() if process.stderr else ""
                    raise AssertionError(f"etl serve did not answer: {message}") from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


def console_errors(driver: Any) -> list[dict[str, Any]]:
    """Console messages at error level since the last call."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def screenshot(driver: Any, name: str, height: int | None = None) -> None:
    """Save a PNG into $ETL_SCREENSHOTS when set (the pictures of the README and docs/)."""
    folder = os.environ.get("ETL_SCREENSHOTS")
    if not folder:
        return
    driver.set_window_size(1400, height or 900)
    Path(folder).mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(Path(folder) / name))
    driver.set_window_size(1200, 900)


def next_page(driver: Any, act: Callable[[], object]) -> None:
    """Do what leaves the page (press Enter in a form, click a link), then wait until the next
    page has replaced it and loaded.

    The old page is marked with a token on its window object; the next page's window has none.
    Asking an element of the old page whether it went stale is not enough: while the document is
    being replaced Chrome may answer with a generic inspector error instead of a stale-element
    error, and the wait would fail on it.
    """
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    token = os.urandom(8).hex()
    driver.execute_script("window.__etlPage = arguments[0]", token)
    act()
    wait = WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,))
    wait.until(lambda d: d.execute_script("return window.__etlPage || null") != token)
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")


def submit(driver: Any, field: Any, text: str) -> None:
    """Type into a form field and press Enter; return once the result page has loaded."""
    from selenium.webdriver.common.keys import Keys

    next_page(driver, lambda: field.send_keys(text, Keys.ENTER))


def cells(driver: Any, column: str) -> list[str]:
    """The texts of a column of Datasette's result table."""
    from selenium.webdriver.common.by import By

    return [
        e.text
        for e in driver.find_elements(By.CSS_SELECTOR, f"table.rows-and-columns td.col-{column}")
    ]


@pytest.mark.slow
def test_search_from_the_box_shows_ranked_results(browser: Any, server: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server + "/papers/ranked_search")
    submit(browser, browser.find_element(By.CSS_SELECTOR, "form.sql input[name=search]"), "ZorbNet")
    marks = browser.find_elements(By.CSS_SELECTOR, "td.col-snippet mark")
    assert marks and {m.text.lower() for m in marks} == {"zorbnet"}
    labels = cells(browser, "label")
    assert labels[0] == "ZorbNet: Sparse Attention Without the Pain"  # title and method weigh most
    assert len(labels) == 3 and all(label.strip() for label in labels)
    scores = [float(s) for s in cells(browser, "score")]
    assert scores == sorted(scores, reverse=True)
    assert console_errors(browser) == []
    screenshot(browser, "serve-search.png")


@pytest.mark.slow
def test_search_box_on_the_papers_table_filters(browser: Any, server: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server + "/papers/papers")
    submit(browser, browser.find_element(By.ID, "_search"), "zzzzqqq")
    assert "0 rows" in browser.find_element(By.CSS_SELECTOR, "h3").text
    search = browser.find_element(By.ID, "_search")
    search.clear()
    submit(browser, search, "TraceGrad")
    assert browser.find_element(By.CSS_SELECTOR, "h3").text.startswith("1 row")
    assert cells(browser, "title") == ["TraceGrad"]  # untitled: its label is shown
    assert console_errors(browser) == []


@pytest.mark.slow
def test_a_packaged_view_opens_from_the_database_page(browser: Any, server: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server + "/papers")
    first_link = browser.find_element(By.CSS_SELECTOR, ".etl-views a")
    assert first_link.text == "Papers with code"
    next_page(browser, first_link.click)
    assert browser.find_element(By.TAG_NAME, "h1").text.startswith("Papers with code")
    labels = cells(browser, "label")
    assert len(labels) >= 10 and all(label.strip() for label in labels)
    assert cells(browser, "title") == labels  # an untitled paper's title cell shows its label
    assert browser.find_elements(By.CSS_SELECTOR, ".facet-info")  # venue, year, code host
    assert console_errors(browser) == []
    screenshot(browser, "serve-view.png")


@pytest.mark.slow
def test_the_report_renders_every_chart_offline(
    browser: Any, database: str, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    output = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "etl", "report", "--db", database, "-o", str(output)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    browser.get(output.as_uri())
    charts = browser.find_elements(By.CSS_SELECTOR, ".chart")
    assert len(charts) == len(SECTIONS)
    picked_up = browser.find_element(By.CSS_SELECTOR, '.chart[data-chart="picked_up"] svg')
    assert "ZorbNet" in picked_up.get_attribute("outerHTML")
    for chart in charts:
        svg = chart.find_element(By.TAG_NAME, "svg")
        size = svg.size
        assert size["width"] > 100 and size["height"] > 30, chart.get_attribute("data-chart")
        assert svg.find_elements(By.CSS_SELECTOR, "path, rect"), chart.get_attribute("data-chart")
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert console_errors(browser) == []
    height = browser.execute_script("return document.body.scrollHeight")
    screenshot(browser, "report.png", height=min(int(height) + 40, 4000))


def paper_pk(database: str, where: str) -> int:
    """The row number of the paper a condition picks, read from the served file."""
    path = database.removeprefix("sqlite:///")
    with sqlite3.connect(path) as connection:
        return int(connection.execute(f"SELECT pk FROM papers WHERE {where}").fetchone()[0])


def test_a_paper_page_reads_as_a_paper(browser: Any, server: str, database: str) -> None:
    from selenium.webdriver.common.by import By

    pk = paper_pk(database, "title LIKE 'ZorbNet%'")
    browser.get(f"{server}/papers/papers/{pk}")
    page = browser.find_element(By.CSS_SELECTOR, "article.etl-paper")
    assert page.find_element(By.TAG_NAME, "h1").text == "ZorbNet: Sparse Attention Without the Pain"
    assert browser.title.startswith("ZorbNet: Sparse Attention Without the Pain")
    authors = page.find_elements(By.CSS_SELECTOR, ".etl-authors a")
    assert [a.text for a in authors] == ["Ada Zorb", "Béla Quux"]
    (sighting,) = page.find_elements(By.CSS_SELECTOR, ".etl-sightings li")
    assert "2024" in sighting.text and "democonf_2024.jsonl" in sighting.text
    code = page.find_element(By.CSS_SELECTOR, ".etl-links a")
    assert code.get_attribute("href") == "https://gitlab.com/acme/zorbnet"
    introduced = page.find_elements(By.CSS_SELECTOR, ".etl-methods-introduced li a")
    assert [m.text for m in introduced] == ["ZorbNet"]
    assert "sparse attention" in page.find_element(By.CSS_SELECTOR, ".etl-abstract").text
    assert page.find_elements(By.CSS_SELECTOR, ".etl-topics li")
    raw = page.find_element(By.CSS_SELECTOR, "details.etl-raw")
    assert raw.get_attribute("open") is None  # the stored fields wait one click away
    assert not raw.find_element(By.CSS_SELECTOR, "table").is_displayed()
    screenshot(browser, "serve-paper.png", height=1100)
    raw.find_element(By.TAG_NAME, "summary").click()
    assert raw.find_element(By.CSS_SELECTOR, "table").is_displayed()
    assert "abstract_raw" in raw.text
    assert console_errors(browser) == []


def test_an_untitled_paper_page_shows_its_label_and_its_methods(
    browser: Any, server: str, database: str
) -> None:
    from selenium.webdriver.common.by import By

    pk = paper_pk(database, "title IS NULL AND abstract LIKE 'Our method improves ZorbNet%'")
    browser.get(f"{server}/papers/papers/{pk}")
    heading = browser.find_element(By.CSS_SELECTOR, "article.etl-paper h1 .etl-untitled")
    assert heading.text.startswith("Our method improves ZorbNet")
    mentioned = browser.find_elements(By.CSS_SELECTOR, ".etl-methods-mentioned li a")
    assert "ZorbNet" in [m.text for m in mentioned]
    acronyms = browser.find_element(By.CSS_SELECTOR, ".etl-acronyms").text
    assert "RoPE" in acronyms and "Rotary Position Embedding" in acronyms
    assert console_errors(browser) == []


def test_the_search_page_title_names_the_search_not_the_sql(browser: Any, server: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server + "/papers/ranked_search")
    submit(browser, browser.find_element(By.CSS_SELECTOR, "form.sql input[name=search]"), "ZorbNet")
    assert browser.title == "Ranked search with snippets: ZorbNet · papers"
    assert "SELECT" not in browser.title
