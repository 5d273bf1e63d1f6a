"""Helpers of test_ray_backend.py (imported by Ray workers, so no pytest here).

* :class:`GatedPolicy`: the random bot, which — when ``$PAOHUZI_TEST_GATE/armed`` exists —
  stops at its first move in each process, writes ``waiting-PID`` and waits for
  ``$PAOHUZI_TEST_GATE/open``. The test then knows a worker is mid-shard, without timing.
* ``python ray_gate.py cluster PORT DIR``: the init process of a network + PID namespace
  holding only ``lo``: brings ``lo`` up, starts a Ray head and a second node (1 CPU each, on
  127.0.0.1, temp dir under DIR), writes ``DIR/ready``, reaps children until SIGTERM, then
  runs ``ray stop`` (which, in its own PID namespace, sees only this cluster) and exits —
  the kernel then kills whatever is left in the namespace.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from engine.policies.random_policy import RandomPolicy

_passed = False


def _gate() -> None:
    global _passed
    gate = os.environ.get("PAOHUZI_TEST_GATE")
    if not gate or not os.path.exists(os.path.join(gate, "armed")):
        _passed = True
        return
    Path(gate, f"waiting-{os.getpid()}").write_text(str(os.getpid()))
    while not os.path.exists(os.path.join(gate, "open")):
        time.sleep(0.05)
    _passed = True


class GatedPolicy(RandomPolicy):
    def act(self, observation, legal_actions, rng):  # type: ignore[no-untyped-def]
        if not _passed:
            _gate()
        return super().act(observation, legal_actions, rng)


def cluster_main(port: str, root: str) -> int:
    base = Path(root)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    ray = str(Path(sys.executable).with_name("ray"))
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
    head = [ray, "start", "--head", f"--port={port}", "--include-dashboard=false", *common,
            f"--temp-dir={base / 'ray'}"]  # fmt: skip
    join = [ray, "start", f"--address=127.0.0.1:{port}", *common]
    with open(base / "cluster.log", "ab") as log:
        for cmd in (head, join):
            if subprocess.run(cmd, stdout=log, stderr=log).returncode != 0:
                return 3
    stop = False

    def on_term(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    (base / "ready").write_text("ready")
    while not stop:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            pid = 0
        if pid == 0:
            time.sleep(0.2)
    with open(base / "cluster.log", "ab") as log:
        subprocess.run([ray, "stop", "--force"], stdout=log, stderr=log, timeout=60)
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["cluster"]:
    sys.exit(cluster_main(sys.argv[2], sys.argv[3]))
