"""Builders of the left-over tests (``paohuzi doctor``, ``rm`` finishing a removal): a small
store of simulated runs and the pid of a process that has ended, to name what a SIGKILL
leaves behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engine.rules import find_rules
from replay.record import runner
from replay.record.spec import RunSpec
from replay.store.fsinfo import pid_alive


def small_store(root: Path, *names: str) -> Path:
    """A store at ``root`` with a finished run of 8 hands for each of ``names``."""
    rules = find_rules("hunan")
    for name in names:
        spec = RunSpec(rules=rules, policies=("random",) * rules.players, seed=3, deals=8,
                       session_length=4, shard_hands=4)  # fmt: skip
        runner.simulate(spec, root, name)
    return root


def dead_pid() -> int:
    """The pid of a process that has run and been waited for (so is gone), as a SIGKILLed
    writer's pid is; another is taken in the unlikely case it was given out again."""
    for _ in range(100):
        p = subprocess.Popen([sys.executable, "-c", "pass"])
        p.wait()
        if not pid_alive(p.pid):
            return p.pid
    raise AssertionError("no pid stayed free")
