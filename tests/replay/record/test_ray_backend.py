"""simulate --backend ray: a real two-node cluster on this machine equals the process pool,
a killed Ray worker is retried (no hand lost or duplicated), Ctrl-C and resume, the local
instance, --workers capping, and ray missing.

LOOPBACK ONLY: Ray binds to the machine's external interface and probes an outside address
even when told 127.0.0.1, so every Ray process here runs in a network namespace holding only
``lo`` (and the cluster in its own PID namespace, so ``ray stop`` sees only it). Without
namespaces the Ray tests skip; they never fall back to the external interface.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from child_signals import interruptible
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.record.backend import LocalBackend
from replay.store.runs import open_store

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CLI = [sys.executable, "-c", "from paohuzi.cli.main import main; main()"]
POLICY = "ray_gate:GatedPolicy"  # the random bot, which can stop mid-shard on request
ARGS = ["-n", "320", "--seed", "9", "--shard-hands", "32", "--policies", POLICY, "-q"]
PORT = "6379"  # in the namespace's own network stack


def _namespaces_work() -> str | None:
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        return "unshare/nsenter not found"
    if shutil.which("ip") is None:
        return "ip (iproute2) not found"
    probe = ["unshare", "--net", "--pid", "--fork", "--mount-proc", "ip", "link", "set", "lo", "up"]
    try:
        r = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unshare failed: {e}"
    return None if r.returncode == 0 else f"cannot create namespaces: {r.stderr.strip()}"


NO_NETNS = _namespaces_work()
needs_netns = pytest.mark.skipif(
    NO_NETNS is not None,
    reason=f"Ray tests run in a loopback-only network namespace: {NO_NETNS}",
)


def _env(tmp: Path, gate: Path) -> dict[str, str]:
    token = tmp / "auth_token"
    if not token.exists():
        token.write_text(secrets.token_hex(32))
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]),
        "PAOHUZI_TEST_GATE": str(gate),
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN_PATH": str(token),
        "RAY_USAGE_STATS_ENABLED": "0",
    }


@dataclass
class Cluster:
    init_pid: int  # host pid of the namespace's init process
    env: dict[str, str]
    gate: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{PORT}"

    def popen(self, *args: str, data: Path | None) -> subprocess.Popen[str]:
        """``paohuzi ARGS --data DATA`` (no ``--data`` for None) inside the cluster's network
        namespace."""
        store = [] if data is None else ["--data", str(data)]
        cmd = ["nsenter", "-t", str(self.init_pid), "-n", "--", *CLI, *args, *store]
        return subprocess.Popen(cmd, env=self.env, cwd=ROOT, text=True, start_new_session=True, preexec_fn=interruptible,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip

    def run(self, *args: str, data: Path | None) -> subprocess.CompletedProcess[str]:
        p = self.popen(*args, data=data)
        out, err = p.communicate(timeout=300)
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def arm(self) -> None:
        for f in self.gate.iterdir():
            f.unlink()
        (self.gate / "armed").write_text("")

    def wait_for_worker(self, proc: subprocess.Popen[str]) -> int:
        """The host pid of a Ray worker stopped at the gate, mid-shard."""
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            waiting = sorted(self.gate.glob("waiting-*"))
            if waiting:
                return _host_pid(int(waiting[0].name.split("-")[1]), self.init_pid)
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        raise AssertionError("no Ray worker reached the gate")

    def open_gate(self) -> None:
        (self.gate / "open").write_text("")

    def disarm(self) -> None:
        for f in self.gate.iterdir():
            f.unlink()


def _host_pid(ns_pid: int, init_pid: int) -> int:
    """The host pid of the process with pid ``ns_pid`` in ``init_pid``'s PID namespace."""
    ns = os.readlink(f"/proc/{init_pid}/ns/pid")
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            status = (p / "status").read_text()
            if os.readlink(p / "ns" / "pid") != ns:
                continue
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("NSpid:") and int(line.split()[-1]) == ns_pid:
                return int(p.name)
    raise AssertionError(f"no process {ns_pid} in the cluster's namespace")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if NO_NETNS is not None:
        pytest.skip(f"Ray tests run in a loopback-only network namespace: {NO_NETNS}")
    with short_tmp() as tmp:
        yield from _cluster(tmp)


@contextlib.contextmanager
def short_tmp() -> Iterator[Path]:
    """A short temporary folder: Ray puts Unix sockets under it, and an AF_UNIX path may not
    exceed 107 bytes (pytest's own tmp paths grow with its run counter)."""
    tmp = Path(tempfile.mkdtemp(prefix="phz-ray-", dir="/tmp"))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _cluster(tmp: Path) -> Iterator[Cluster]:
    gate = tmp / "gate"
    gate.mkdir()
    env = _env(tmp, gate)
    cmd = ["unshare", "--net", "--pid", "--fork", "--mount-proc",
           sys.executable, str(HERE / "ray_gate.py"), "cluster", PORT, str(tmp)]  # fmt: skip
    proc = subprocess.Popen(
        cmd, env=env, cwd=ROOT, start_new_session=True, preexec_fn=interruptible
    )
    init_pid = 0
    try:
        deadline = time.monotonic() + 240
        while not (tmp / "ready").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                log = (tmp / "cluster.log").read_text(errors="replace")[-3000:]
                raise AssertionError(f"the Ray cluster did not start:\n{log}")
            time.sleep(0.2)
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        init_pid = int(children[0])
        yield Cluster(init_pid, env, gate)
    finally:
        # the namespace dies with its init, and every Ray process in it (a graceful ``ray
        # stop`` took 20 s and leaves nothing more behind: the temp folder goes with tmp)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The process pool's content for ARGS (the gate unarmed)."""
    tmp = tmp_path_factory.mktemp("pool")
    gate = tmp / "gate"
    gate.mkdir()
    cmd = [*CLI, "simulate", *ARGS, "--workers", "2", "--run", "r", "--data", str(tmp / "d")]
    r = subprocess.run(cmd, env=_env(tmp, gate), cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (run,) = open_store(tmp / "d").runs()
    return run.content_digest()


def _check(data: Path, reference: str) -> None:
    (run,) = open_store(data).runs()
    assert run.status == "complete" and run.n_hands == 320
    idx = [s["index"] for s in run.manifest["shards"]]
    assert idx == sorted(set(idx)) == list(range(10))  # each shard committed once
    con = open_store(data).connect()
    assert con.execute("SELECT count(*), count(DISTINCT hand_id) FROM hands").fetchone() == (
        320,
        320,
    )
    assert run.content_digest() == reference
    assert not list(data.rglob(".*.tmp-*"))


# ------------------------------------------------------------------ a two-node cluster


@needs_netns
def test_cluster_equals_process_pool(cluster: Cluster, reference: str, tmp_path: Path) -> None:
    args = ["simulate", *ARGS, "--run", "r", "--backend", "ray", "--address", cluster.address]
    r = cluster.run(*args, "--workers", "100", data=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "--workers 100 lowered to 2, the CPU count of the ray cluster" in r.stderr
    assert "Traceback" not in r.stderr
    _check(tmp_path, reference)
    again = cluster.run(*args, data=tmp_path)
    assert again.returncode == 0 and "already complete" in again.stdout


@needs_netns
def test_cluster_nodes_are_loopback(cluster: Cluster, tmp_path: Path) -> None:
    args = ["simulate", "-n", "16", "--backend", "ray", "--address", cluster.address]
    r = cluster.run(*args, data=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"ray: cluster {cluster.address}, 2 node(s) at 127.0.0.1, 2 CPUs" in r.stderr


@needs_netns
def test_killed_worker_is_retried(cluster: Cluster, reference: str, tmp_path: Path) -> None:
    cluster.arm()
    args = ["simulate", *ARGS, "--run", "r", "--backend", "ray", "--address", cluster.address]
    proc = cluster.popen(*args, data=tmp_path)
    try:
        pid = cluster.wait_for_worker(proc)
        assert "ray::" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
        os.kill(pid, signal.SIGKILL)  # a worker dies mid-shard
        cluster.open_gate()
        out, err = proc.communicate(timeout=300)
    finally:
        cluster.disarm()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    _check(tmp_path, reference)


@needs_netns
def test_ctrl_c_then_resume(cluster: Cluster, reference: str, tmp_path: Path) -> None:
    cluster.arm()
    args = ["simulate", *ARGS, "--run", "r", "--backend", "ray", "--address", cluster.address]
    proc = cluster.popen(*args, data=tmp_path)
    try:
        cluster.wait_for_worker(proc)
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        cluster.disarm()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("interrupted:")
    manifest = json.loads((tmp_path / "runs" / "run=r" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    done = cluster.run(*args, data=tmp_path)
    assert done.returncode == 0, done.stderr
    _check(tmp_path, reference)


@needs_netns
def test_sweep_on_cluster(cluster: Cluster, reference: str, tmp_path: Path) -> None:
    args = ["sweep", "--name", "c", *ARGS, "--backend", "ray", "--address", cluster.address]
    r = cluster.run(*args, data=tmp_path)
    assert r.returncode == 0, r.stderr
    assert open_store(tmp_path).run_names() == ["sweep-c.hunan.ray_gate_GatedPolicy"]
    _check(tmp_path, reference)


# ------------------------------------------------------------------ a local Ray instance


@needs_netns
def test_local_instance_on_loopback(reference: str) -> None:
    with short_tmp() as tmp:
        _local_instance(tmp, reference)


def _local_instance(tmp: Path, reference: str) -> None:
    gate = tmp / "gate"
    gate.mkdir()
    env = {**_env(tmp, gate), "RAY_TMPDIR": str(tmp)}
    data = tmp / "d"
    sim = [*CLI, "simulate", *ARGS[:-1], "--run", "r", "--backend", "ray", "--workers", "100"]
    script = 'ip link set lo up && exec "$@"'
    cmd = ["unshare", "--net", "bash", "-c", script, "sh", *sim, "--data", str(data)]
    r = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    cpus = os.cpu_count() or 1
    assert f"ray: local instance, 1 node(s) at 127.0.0.1, {cpus} CPUs" in r.stderr
    assert "Traceback" not in r.stderr
    _check(data, reference)


# ------------------------------------------------------------------ without Ray


def test_workers_capped_at_cpu_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay import pool

    started: list[int] = []
    real = pool.ProcessPoolExecutor

    class Spy(real):  # type: ignore[misc, valid-type]
        def shutdown(self, *a: object, **kw: object) -> None:
            started.append(len(self._processes or {}))
            super().shutdown(*a, **kw)

    monkeypatch.setattr(pool, "ProcessPoolExecutor", Spy)
    monkeypatch.setattr(LocalBackend, "cpus", lambda self: 2)
    r = CliRunner().invoke(
        main,
        [
            "simulate",
            "-n",
            "400",
            "--shard-hands",
            "32",
            "-w",
            "100",
            "-q",
            "--data",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "--workers 100 lowered to 2, the CPU count of this machine" in r.output
    assert started and max(started) <= 2


def test_ray_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.record import ray_backend

    monkeypatch.setattr(ray_backend, "ray_available", lambda: False)
    r = CliRunner().invoke(
        main, ["simulate", "-n", "5", "--backend", "ray", "--data", str(tmp_path)]
    )
    assert r.exit_code == 2, r.output
    assert r.output.strip() == "Error: ray is not installed: pip install 'paohuzi[cluster]'"


def test_group_shards_keeps_every_shard_once() -> None:
    from replay.record.ray_backend import group_shards

    for n, size, workers in [(1, 64, 2), (25, 4096, 2), (100, 64, 2), (37, 512, 8)]:
        groups = group_shards(list(range(n)), size, workers)
        assert [i for g in groups for i in g] == list(range(n))


# ------------------------------------------------------------------ paohuzi tune on Ray

TUNE = ["-g", "2", "--deals", "24", "--popsize", "3", "--validation-deals", "200", "--seed", "4",
        "--params", "danger_w,hx", "-q"]  # fmt: skip


def _tune_report(out: Path) -> dict:
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    doc.pop("command")
    for g in doc["generations"]:
        g.pop("seconds")
    doc["validation"].pop("seconds")
    return doc


@needs_netns
def test_tune_on_ray_equals_the_process_pool(cluster: Cluster, tmp_path: Path) -> None:
    """``paohuzi tune --backend ray`` (on the loopback cluster): the same generations,
    validation and weights as the process pool."""
    tune = ["tune", str(tmp_path / "ray"), *TUNE, "--backend", "ray", "--address", cluster.address]
    r = cluster.run(*tune, "-w", "2", data=None)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    local = CliRunner().invoke(main, ["tune", str(tmp_path / "local"), *TUNE, "-w", "2"])
    assert local.exit_code == 0, local.output
    assert _tune_report(tmp_path / "ray") == _tune_report(tmp_path / "local")


# ------------------------------------------------------------------ paohuzi review on Ray


@needs_netns
def test_review_on_ray_equals_the_process_pool(cluster: Cluster, tmp_path: Path) -> None:
    """``paohuzi review RUN --hands … --backend ray`` (on the loopback cluster): the same
    rates and hand summaries as the process pool, and the same stored review."""
    data = tmp_path / "d"
    r = CliRunner().invoke(main, ["simulate", "--data", str(data), "--run", "m", "-n", "4",
                                  "-q", "-w", "1", "-p", "heuristic,random,greedy"])  # fmt: skip
    assert r.exit_code == 0, r.output
    args = ["review", "m", "--hands", "0-3", "-N", "4", "--format", "json", "-q"]
    ray = cluster.run(*args, "--backend", "ray", "--address", cluster.address, data=data)
    assert ray.returncode == 0, ray.stderr
    assert "Traceback" not in ray.stderr
    local = CliRunner().invoke(main, [*args, "--data", str(data), "-w", "2", "--no-store"])
    assert local.exit_code == 0, local.output
    a, b = json.loads(ray.stdout), json.loads(local.stdout)
    assert a["rates"] == b["rates"] and a["hand_summaries"] == b["hand_summaries"]
    stored = json.loads((data / "runs" / "run=m" / "manifest.json").read_text())["reviews"]
    assert [e["hands"] for e in stored] == [[[0, 3, 7]]]
