"""`etl run --dask`: a run's sources loaded by the worker processes of a Dask cluster, into one
PostgreSQL database, equal to a serial load (also after a worker is killed mid-source)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import DBAPIError

from etl.cluster import CONNECT_SECONDS
from etl.models import RunReport
from etl.pipeline import RunOptions, run
from tests.helpers import fetch, fetch_one, fresh_postgres_database, load, snapshot, write_files

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

FILES, PER_FILE = 8, 150


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    """Two worker processes of one thread each, as `--dask local:2` starts them."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as local:
        yield local


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """8 files of 400 papers, each repeating 40 of the file before it, each with a reject."""
    folder = tmp_path_factory.mktemp("dask") / "lists"
    write_files(folder, files=FILES, per_file=PER_FILE)
    return folder


@pytest.fixture(scope="module")
def local_run(corpus: Path) -> Iterator[tuple[dict[str, Any], str]]:
    """What a serial, local `etl run` of the corpus makes (by natural keys) and prints."""
    with fresh_postgres_database(migrated=True) as url:
        result = etl_run(corpus, url, "--workers", "1")
        assert result.returncode == 3, result.stderr  # each file has a reject
        yield snapshot(url), result.stdout


@pytest.fixture(scope="module")
def serial(local_run: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """The database a serial load of the corpus makes, by natural keys."""
    return local_run[0]


def etl_run(folder: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """The real `etl run` command in a child process."""
    command = [sys.executable, "-m", "etl", "run", str(folder), "-q", "--db", url, *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def counts(summary: str) -> list[str]:
    """The summary's lines that count things (not the run id, database or seconds)."""
    return [line for line in summary.splitlines() if not line.startswith(("Run ", "  seconds"))]


@pytest.mark.postgres
@pytest.mark.slow
def test_a_dask_run_equals_a_serial_load_with_the_same_summary(
    cluster: distributed.LocalCluster, corpus: Path, local_run: tuple[dict[str, Any], str]
) -> None:
    serial, summary = local_run
    with fresh_postgres_database(migrated=True) as url:
        remote = etl_run(corpus, url, "--dask", cluster.scheduler_address)
        assert remote.returncode == 3, remote.stderr  # each file has a reject
        assert counts(remote.stdout) == counts(summary)
        assert f"sources  {FILES} loaded, 0 unchanged (skipped), 0 failed" in remote.stdout
        assert snapshot(url) == serial
        # one run, recorded by the driver, and every source loaded under it
        assert fetch(url, "SELECT id, status, sources_loaded FROM runs") == [(1, "partial", 8)]
        assert fetch(url, "SELECT DISTINCT run_id FROM sources") == [(1,)]

        again = etl_run(corpus, url, "--dask", cluster.scheduler_address)
        assert again.returncode == 0, again.stderr
        assert f"sources  0 loaded, {FILES} unchanged (skipped), 0 failed" in again.stdout
        assert snapshot(url) == serial


Outcome = list[RunReport | BaseException]


def loading_in_background(url: str, corpus: Path, address: str) -> tuple[threading.Thread, Outcome]:
    """A `--dask` run in a thread of this process (the driver), and where its report goes."""
    outcome: Outcome = []
    options = RunOptions(paths=(str(corpus),), database_url=url, dask=address)

    def drive() -> None:
        try:
            outcome.append(run(options))
        except BaseException as exc:  # shown by the test's assertion
            outcome.append(exc)

    driver = threading.Thread(target=drive)
    driver.start()
    return driver, outcome


def committed_sources(url: str) -> int:
    """How many sources the database holds (0 before the run has migrated it)."""
    try:
        return int(str(fetch_one(url, "SELECT count(*) FROM sources")))
    except DBAPIError:
        return 0


def kill_a_busy_worker(url: str, address: str) -> None:
    """Once the run has committed a source, SIGKILL a worker process that is mid-source."""
    deadline = time.monotonic() + 300
    with distributed.Client(address) as client:
        while not committed_sources(url):
            assert time.monotonic() < deadline, "the run committed no source in 5 minutes"
            time.sleep(0.05)
        while True:
            busy = [worker for worker, keys in client.processing().items() if keys]
            if busy:
                break
            assert time.monotonic() < deadline, "no worker was loading a source"
            time.sleep(0.02)
        pid = client.run(os.getpid, workers=busy[:1])[busy[0]]  # the worker process itself
        os.kill(pid, signal.SIGKILL)


@pytest.mark.postgres
@pytest.mark.slow
def test_a_source_whose_worker_was_killed_is_loaded_again(
    cluster: distributed.LocalCluster, corpus: Path, serial: dict[str, Any]
) -> None:
    with fresh_postgres_database(migrated=True) as url:
        driver, outcome = loading_in_background(url, corpus, cluster.scheduler_address)
        kill_a_busy_worker(url, cluster.scheduler_address)
        driver.join(timeout=600)
        (report,) = outcome
        assert isinstance(report, RunReport), report
        assert report.status == "partial" and report.sources_failed == 0  # rejects only
        # a killed worker may have committed its source just before it died: then its
        # second attempt found it unchanged
        assert report.sources_loaded + report.sources_skipped == FILES
        assert snapshot(url) == serial
        assert fetch(url, "SELECT count(*), min(status) FROM runs") == [(1, "partial")]


@pytest.mark.postgres
@pytest.mark.slow
def test_a_source_whose_workers_keep_dying_fails_alone(
    corpus: Path, serial: dict[str, Any]
) -> None:
    """With no failure allowed, the killed worker's sources are reported failed, the others
    are loaded, and a rerun loads them."""
    settings = {"distributed.scheduler.allowed-failures": 0}
    with (
        dask.config.set(settings),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as strict,
        fresh_postgres_database(migrated=True) as url,
    ):
        driver, outcome = loading_in_background(url, corpus, strict.scheduler_address)
        kill_a_busy_worker(url, strict.scheduler_address)
        driver.join(timeout=600)
        (report,) = outcome
        assert isinstance(report, RunReport), report
        # every source the killed worker held (running or queued there) failed alone
        failed = [source for source in report.sources if source.status == "failed"]
        assert failed and all("the Dask workers loading it died" in str(s.message) for s in failed)
        assert report.sources_loaded == FILES - len(failed)
        rerun = load(url, corpus)
        assert (rerun.sources_loaded, rerun.sources_skipped) == (len(failed), FILES - len(failed))
        assert snapshot(url) == serial


def test_a_dask_run_refuses_sqlite(tmp_path: Path) -> None:
    result = etl_run(tmp_path, f"sqlite:///{tmp_path / 'papers.db'}", "--dask", "local:2")
    assert result.returncode == 1
    assert "--dask needs a PostgreSQL database" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "papers.db").exists()  # refused before anything was written


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.parametrize("address", ["tcp://127.0.0.1:99999", "tcp://:8786", "127.0.0.1:87x"])
def test_an_impossible_scheduler_address_is_refused_at_once(address: str) -> None:
    with fresh_postgres_database() as url:
        started = time.monotonic()
        result = etl_run(Path("."), url, "--dask", address)
        assert time.monotonic() - started < CONNECT_SECONDS  # no wait for a timeout
        assert result.returncode == 1
        assert f"--dask {address!r} is not a scheduler address" in result.stderr
        assert "Traceback" not in result.stderr
        assert fetch_one(url, "SELECT count(*) FROM pg_tables WHERE tablename = 'runs'") == 0


def test_a_malformed_local_cluster_is_refused_before_the_run_is_recorded() -> None:
    with fresh_postgres_database() as url:
        result = etl_run(Path("."), url, "--dask", "local:0")
        assert result.returncode == 1
        assert "--dask local:N needs a positive number of workers" in result.stderr
        assert "Traceback" not in result.stderr
        assert fetch_one(url, "SELECT count(*) FROM pg_tables WHERE tablename = 'runs'") == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.postgres
@pytest.mark.slow
def test_a_scheduler_lost_mid_run_is_one_error_and_the_run_row_counts_what_committed(
    corpus: Path,
) -> None:
    address = f"tcp://127.0.0.1:{free_port()}"
    cli = [sys.executable, "-m"]
    scheduler = subprocess.Popen(
        [*cli, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
         address.rsplit(":", 1)[1], "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    worker = subprocess.Popen(
        [*cli, "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        with fresh_postgres_database() as url:
            command = [*cli, "etl", "run", str(corpus), "-q", "--db", url, "--dask", address]
            driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 300
            while not committed_sources(url):
                assert driver.poll() is None, driver.communicate()
                assert time.monotonic() < deadline, "the run committed no source in 5 minutes"
                time.sleep(0.05)
            scheduler.kill()
            _, errors = driver.communicate(timeout=300)
            worker.kill()
            worker.wait()
            message = errors.decode()
            assert driver.returncode == 1, message
            assert message.startswith(f"Error: lost the Dask scheduler at '{address}'"), message
            assert "Traceback" not in message and url not in message
            ((status, loaded),) = fetch(url, "SELECT status, sources_loaded FROM runs")
            assert status == "failed"
            # what workers committed after the driver's last look is not the run's to count
            assert 1 <= int(str(loaded)) <= committed_sources(url) < FILES
            assert load(url, corpus).sources_failed == 0  # a rerun loads the rest
    finally:
        for process in (scheduler, worker):
            process.kill()
            process.wait()
