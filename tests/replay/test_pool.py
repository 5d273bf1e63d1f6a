"""The one process pool (replay/pool.py) behind simulate, verify and index: its start-method
policy, how its workers are prepared, and how it stops on an error or a dead worker."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from replay import pool

_SET: list[str] = []


def _remember(word: str) -> None:
    _SET.append(word)


def _what_was_set() -> list[str]:
    return list(_SET)


def _sigint_handler() -> object:
    return signal.getsignal(signal.SIGINT)


def _die() -> None:
    os._exit(3)


def _sleep(seconds: float, done: str = "") -> float:
    """Sleep, then leave ``done`` behind (a file: the task ran to its end)."""
    time.sleep(seconds)
    if done:
        Path(done).write_text("done")
    return seconds


class Stop(Exception):
    pass


def test_start_method_forks_only_when_asked_and_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pool.start_method() == "spawn"
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert pool.start_method(fork=True) == "fork"
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert pool.start_method(fork=True) == "spawn"


def test_workers_ignore_ctrl_c_and_run_the_initializer() -> None:
    with pool.process_pool(1, initializer=_remember, initargs=("ready",)) as ex:
        assert ex.submit(_what_was_set).result() == ["ready"]
        assert ex.submit(_sigint_handler).result() == signal.SIG_IGN


def test_a_dead_worker_becomes_the_callers_error() -> None:
    with pytest.raises(Stop, match="a worker died") as got:  # noqa: SIM117
        with pool.process_pool(1, broken=lambda: Stop("a worker died")) as ex:
            ex.submit(_die).result()
    assert got.value.__cause__ is None and got.value.__suppress_context__
    with pytest.raises(BrokenProcessPool), pool.process_pool(1) as ex:
        ex.submit(_die).result()


@pytest.mark.parametrize("terminate", [True, False])
def test_an_error_stops_the_running_work_or_lets_it_finish(terminate: bool, tmp_path: Path) -> None:
    marks = [tmp_path / f"task{i}" for i in range(3)]
    with pytest.raises(Stop), pool.process_pool(1, terminate=terminate) as ex:
        ex.submit(abs, 1).result()  # the worker is up
        # one worker: the first two are handed to it at once (2 s each: the error comes long
        # before the first ends); the third waits, or was handed over too
        tasks = [ex.submit(_sleep, 2.0, str(m)) for m in marks]
        while not tasks[1].running():
            time.sleep(0.01)
        raise Stop
    assert all(f.done() for f in tasks)
    if terminate:  # the worker was stopped mid-task: no task ran to its end
        assert not any(m.exists() for m in marks)
        assert all(f.cancelled() or f.exception() is not None for f in tasks)
    else:  # what it was given runs to the end; what it was not is never started
        assert [m.exists() for m in marks[:2]] == [True, True]
        assert [f.cancelled() for f in tasks[:2]] == [False, False]
        # the pool hands a worker one task more than it runs: the third may have been handed
        # over before the error (then it ran to its end) or not (then it was cancelled)
        assert marks[2].exists() == (not tasks[2].cancelled())


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_the_cpu_count_is_what_this_process_may_run_on() -> None:
    """A process allowed one CPU (as ``taskset`` or a container's cpuset allows) gets one
    worker by default from every command, and no cap above one."""
    import subprocess
    import sys

    code = (
        "import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]});"
        "from replay.pool import cpu_count; from replay.record.backend import LocalBackend;"
        "from paohuzi.demo_data import main as demo; from paohuzi.cli.index import index as index_command;"
        "import click; ctx = click.Context(demo);"
        "print(cpu_count(), LocalBackend().cpus(),"
        " [p.get_default(ctx) for p in demo.params if p.name == 'workers'][0],"
        " [p.get_default(click.Context(index_command)) for p in index_command.params"
        "  if p.name == 'workers'][0])"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1", "1", "1"]
    assert pool.cpu_count() == len(os.sched_getaffinity(0))
