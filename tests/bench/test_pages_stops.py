"""``python -m bench.pages --browser`` always ends and leaves nothing running (issue 65): stopped
by SIGTERM or SIGINT while it measures, its page server (a Streamlit process group of its
own) and chromium (started by Playwright's driver) are gone once it has exited; a page over
its time limit is named and the benchmark ends with status 1, again with nothing left."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from dash_helpers import CHROMIUM, ROOT, simulate

from bench.pages import alive, descendants

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="needs Debian's chromium (make browser-deps)"
)


@pytest.fixture(scope="module")
def tiny_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("bench-pages") / "data"
    simulate(data, "tiny", ["-n", "40", "--seed", "3", "--policies", "greedy"])
    return data


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _start(store: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.pages", str(store), "--browser", *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # the test's own handle to clean up after a failure
    )


def _kill_all(proc: subprocess.Popen[str], procs: dict[int, int]) -> None:
    """After the test, whatever happened: nothing of the benchmark left behind."""
    for pid in alive({**procs, **descendants(proc.pid)}):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def _wait_gone(procs: dict[int, int], seconds: float = 20) -> dict[int, int]:
    """The processes of ``procs`` still running after up to ``seconds`` (the kernel reaps an
    orphan's children a moment after it dies)."""
    deadline = time.monotonic() + seconds
    left = alive(procs)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = alive(procs)
    return left


class Watch:
    """Every process below the benchmark while it runs (pid → start time, and its command
    line when first seen), polled in a thread: what must all be gone once it has exited."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.seen: dict[int, int] = {}
        self.names: dict[int, str] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.done.is_set():
            for pid, started in descendants(self.proc.pid).items():
                if pid not in self.seen:
                    self.seen[pid] = started
                    self.names[pid] = _cmdline(pid)
            time.sleep(0.1)

    def stop(self) -> None:
        self.done.set()
        self.thread.join()

    def started(self) -> str:
        return " ".join(self.names.values())

    def left(self) -> dict[int, str]:
        """Those still running (after up to 20 s: an orphan's children die a moment later)."""
        return {p: self.names[p] for p in _wait_gone(self.seen)}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_benchmark_leaves_no_server_and_no_browser(
    tiny_store: Path, sig: signal.Signals
) -> None:
    before = set(Path(tempfile.gettempdir()).glob("perf-pages-*"))
    proc = _start(tiny_store, "--runs", "50", "--pages", "overview,win_rates")
    watch = Watch(proc)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        # measuring: the first load is printed once the server and the browser both run
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("first load"):
                break
        assert lines and lines[-1].startswith("first load"), "".join(lines)
        time.sleep(1)  # into the pages' measurements
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=90)
        watch.stop()
        lines.append(out)
        assert proc.returncode == 128 + sig, "".join(lines)
        assert f"stopped by {sig.name}" in out
        assert "--serve" in watch.started() and "chromium" in watch.started(), watch.started()
        assert not watch.left()
        # its folder (the server's notes) removed too
        assert not set(Path(tempfile.gettempdir()).glob("perf-pages-*")) - before
    finally:
        watch.stop()
        _kill_all(proc, watch.seen)


def test_a_page_over_its_time_limit_is_named_and_the_benchmark_ends(tiny_store: Path) -> None:
    proc = _start(tiny_store, "--runs", "2", "--pages", "win_rates", "--page-timeout", "0.2")
    watch = Watch(proc)
    try:
        out, _ = proc.communicate(timeout=600)
        watch.stop()
        assert proc.returncode == 1, out
        assert "TIME LIMIT: page win_rates (new tab, run 1)" in out, out
        assert out.splitlines()[-1].endswith("time limit hit (new tab, run 1)"), out
        assert "--serve" in watch.started() and "chromium" in watch.started(), watch.started()
        assert not watch.left()
    finally:
        watch.stop()
        _kill_all(proc, watch.seen)
