"""paohuzi simulate: determinism (twice, 1 vs 2 workers), resume after SIGKILL / Ctrl-C / a
killed worker / a full disk, duplicate deals, bad input, and every recorded hand rebuilt
through the engine from the log alone."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.compute as pc
import pytest
from child_signals import interruptible
from click.testing import CliRunner

from engine.actions import kind_of
from engine.rules import find_rules
from engine.session import DealerState, next_dealer
from paohuzi.cli.main import main
from replay import schema, store
from replay.record import runner
from replay.record.spec import DEFAULT_SHARD_HANDS, RunSpec
from replay.store import files as store_files
from replay.store.runs import open_store

CLI = [sys.executable, "-c", "from paohuzi.cli.main import main; main()"]
ROOT = Path(__file__).resolve().parents[3]
OTHER = "engine.policies.random_policy:RandomPolicy"  # the random bot under another name


def spec(deals: int = 120, **kw: object) -> RunSpec:
    args: dict = dict(
        rules=find_rules("hunan"),
        policies=("random",) * 3,
        seed=11,
        deals=deals,
        session_length=8,
        shard_hands=32,
    )
    args.update(kw)
    return RunSpec(**args)


def only_run(root: Path) -> store.Run:
    (run,) = open_store(root).runs()
    return run


def shard_sums(run: store.Run) -> list[tuple[str, str]]:
    return [(f["path"], f["sha256"]) for s in run.shards for f in s["files"].values()]


def simulate_cli(*args: str, data: Path, timeout: float = 600, **kw: object):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*CLI, "simulate", "--data", str(data), "-q", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
        **kw,
    )


# ------------------------------------------------------------------ determinism


def test_same_command_twice_same_content(tmp_path: Path) -> None:
    a = runner.simulate(spec(), tmp_path / "a")
    b = runner.simulate(spec(), tmp_path / "b")
    assert a.name == b.name and a.hands == b.hands == 120
    ra, rb = only_run(tmp_path / "a"), only_run(tmp_path / "b")
    assert ra.content_digest() == rb.content_digest()
    assert shard_sums(ra) == shard_sums(rb)  # the same bytes, file by file


def test_one_worker_equals_two(tmp_path: Path) -> None:
    runner.simulate(spec(200, duplicate=True), tmp_path / "w1", workers=1)
    runner.simulate(spec(200, duplicate=True), tmp_path / "w2", workers=2)
    r1, r2 = only_run(tmp_path / "w1"), only_run(tmp_path / "w2")
    assert r1.n_hands == r2.n_hands == 600
    assert r1.content_digest() == r2.content_digest()
    assert shard_sums(r1) == shard_sums(r2)


def test_rerun_confirms_without_duplicating(tmp_path: Path) -> None:
    first = runner.simulate(spec(), tmp_path)
    again = runner.simulate(spec(), tmp_path)
    assert again.already_complete and again.played == 0 and again.hands == first.hands
    con = open_store(tmp_path).connect()
    assert con.execute("SELECT count(*), count(DISTINCT hand_id) FROM hands").fetchone() == (
        120,
        120,
    )
    assert only_run(tmp_path).manifest["status"] == "complete"


def test_hand_ids_sessions_and_dealers(tmp_path: Path) -> None:
    runner.simulate(spec(100, session_length=7), tmp_path)
    rows = only_run(tmp_path).read_table("hands").to_pylist()
    assert [r["hand_id"] for r in rows] == list(range(100))
    assert [(r["session"], r["session_hand"]) for r in rows] == [
        (i // 7, i % 7) for i in range(100)
    ]
    # The dealer follows RULES §2 within a session: winner deals, 3 荒庄 pass the deal.
    rules = find_rules("hunan")
    for prev, cur in zip(rows, rows[1:]):
        if cur["session"] != prev["session"]:
            assert cur["huang_streak"] == 0
            continue
        want = next_dealer(rules, DealerState(prev["dealer"], prev["huang_streak"]), prev["winner"])
        assert (cur["dealer"], cur["huang_streak"]) == (want.dealer, want.huang_streak)


def test_duplicate_pairs_deals_over_rotations(tmp_path: Path) -> None:
    s = spec(40, duplicate=True, policies=("random", OTHER, "random"))
    runner.simulate(s, tmp_path)
    rows = only_run(tmp_path).read_table("hands").to_pylist()
    assert len(rows) == 120
    for i in range(0, 120, 3):
        trio = rows[i : i + 3]
        assert {r["deal_id"] for r in trio} == {i // 3}
        assert [r["rotation"] for r in trio] == [0, 1, 2]
        assert len({r["deck"] for r in trio}) == 1 and len({r["dealer"] for r in trio}) == 1
        # policy p sits at seat (p + r) mod 3: OTHER (p = 1) moves one seat per rotation.
        assert [[r[f"policy_{k}"] for k in range(3)].index(OTHER) for r in trio] == [1, 2, 0]


# ------------------------------------------------------------------ the log rebuilds


def _full_mask(legal: list[int]) -> int:
    m = 0
    for a in legal:
        m |= 1 << kind_of(a)
    return m


def _check_run(run: store.Run) -> int:
    rules = run.rules
    from engine.state import Game

    game = Game(rules)
    n = 0
    for rec in run.iter_hands():
        h, ev = rec.hand, rec.events
        state = game.new_initial_state(rec.deck, rec.dealer)
        for i, (seat, action) in enumerate(rec.history):
            assert ev["seq"][i] == i
            legal = state.pending[seat]
            face = schema.NULL8
            if 10 <= action < 90:
                face = (action - 10) % 20
            assert ev["kind"][i] == kind_of(action)
            assert ev["n_legal"][i] == len(legal)
            assert ev["forced"][i] == state.forced
            assert ev["options"][i] == _full_mask(legal)
            want_card = state.card if face == schema.NULL8 else face
            assert ev["card"][i] == want_card, (rec.hand_id, i)
            want_from = None if kind_of(action) == 3 else state.owner
            assert ev["from_seat"][i] == want_from, (rec.hand_id, i)
            state.apply_checked(seat, action)
        out = state.outcome
        assert out is not None, rec.hand_id
        res = out.result if out.kind != 1 else None
        assert h["outcome"] == out.kind
        assert h["winner"] == out.winner
        assert h["source"] == out.source
        assert h["hu_card"] == out.card and h["from_seat"] == out.from_seat
        assert h["huxi"] == (res.huxi if res else None)
        assert h["deng"] == (res.deng if res else None)
        assert h["fan"] == (res.fan if res else None)
        assert h["score"] == (res.score if res else None)
        mask = schema.mingtang_mask(rules.ruleset, [m for m, _ in res.mingtang]) if res else 0
        assert h["mingtang"] == mask
        assert h["zimo"] == (res.zimo if res else None)
        assert [h[f"delta_{s}"] for s in range(rules.players)] == list(out.deltas)
        assert h["stock_left"] == len(state.stock)
        assert h["n_events"] == len(state.history)
        n += 1
    return n


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory) -> store.Run:
    root = tmp_path_factory.mktemp("big")
    runner.simulate(spec(2000, seed=2024, shard_hands=512), root, workers=2)
    return only_run(root)


def test_every_hand_rebuilds_to_its_outcome(big_run: store.Run) -> None:
    assert _check_run(big_run) == 2000


@pytest.mark.parametrize("preset", ["hunan-4p", "luzhou", "hunan-full"])
def test_other_rules_rebuild(tmp_path: Path, preset: str) -> None:
    s = spec(150, rules=find_rules(preset), policies=("random",) * find_rules(preset).players)
    runner.simulate(s, tmp_path)
    assert _check_run(only_run(tmp_path)) == 150


def test_read_hand_by_id(big_run: store.Run) -> None:
    rec = big_run.read_hand(1234)
    assert rec.hand_id == 1234 and len(rec.history) == rec.hand["n_events"]
    assert rec.rebuild(big_run.rules).outcome.kind == rec.hand["outcome"]
    with pytest.raises(KeyError):
        big_run.read_hand(2000)


def _doc_chi_groups(code: int) -> list[int]:
    """docs/LOG_FORMAT.md §5.1, implemented from the text: the eat shape ids of a 吃 code."""
    n, digits = code - 100, []
    for _ in range(3):
        n, d = divmod(n, 41)
        digits.append(d)
    return [d - 1 for d in reversed(digits) if d]


def test_log_format_doc_decodes_chi(big_run: store.Run) -> None:
    from engine.actions import chi_groups
    from engine.groups import EAT_SHAPE_ID

    codes = set(big_run.read_table("events").filter(pc.field("kind") == 7)["action"].to_pylist())
    assert len(codes) > 50
    for code in codes:
        assert _doc_chi_groups(code) == [EAT_SHAPE_ID[g] for g in chi_groups(code)]


def test_log_format_doc_queries(big_run: store.Run) -> None:
    con = open_store(big_run.path.parents[1]).connect()
    rows = con.execute(
        "SELECT run, avg((outcome = 1)::INT) AS huang_rate, avg(huxi) AS mean_huxi"
        " FROM hands GROUP BY run"
    ).fetchall()
    assert len(rows) == 1 and 0 < rows[0][1] < 1 and rows[0][2] >= 15
    declined = con.execute(
        "SELECT seat, count(*) FROM events WHERE kind = 0 AND options & 2 <> 0 GROUP BY seat"
    ).fetchall()
    assert declined  # random policies decline some wins


def test_bytes_per_hand_within_target(big_run: store.Run) -> None:
    assert big_run.manifest["progress"]["bytes"] / big_run.n_hands <= 300


# ------------------------------------------------------------------ interruptions


def _wait_for_shards(run_path: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            m = json.loads((run_path / "manifest.json").read_text())
            if m["progress"]["shards"] >= n:
                return
        except (OSError, ValueError, KeyError):
            pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("no progress")


ARGS = ["--hands", "1200", "--seed", "5", "--shard-hands", "64", "--run", "r"]
#: The interrupted runs play with the reference engine: the compiled one finishes 1,200
#: hands before a signal sent after the first listed shards can arrive (the bytes are the
#: same with either engine, so the resumed run is still compared with ``reference``).
SLOW = ["--engine", "reference"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("ref")
    done = simulate_cli(*ARGS, "--workers", "1", data=root)
    assert done.returncode == 0, done.stderr
    return only_run(root).content_digest()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigkill_then_resume(tmp_path: Path, reference: str, workers: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [*CLI, "simulate", "--data", str(tmp_path), "-q", *ARGS, *SLOW, "--workers", workers]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, start_new_session=True, preexec_fn=interruptible,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    _wait_for_shards(store.run_dir(tmp_path, "r"), 3, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # The store still reads: the catalog and the run hold exactly the finished shards.
    run = only_run(tmp_path)
    assert run.status == "running" and 3 <= len(run.shards) < 19
    assert run.read_table("hands").num_rows == run.n_hands < 1200
    con = open_store(tmp_path).connect()
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (1,)
    # Resume: exactly N hands, equal to an uninterrupted run.
    done = simulate_cli(*ARGS, "--workers", workers, data=tmp_path)
    assert done.returncode == 0, done.stderr
    run = only_run(tmp_path)
    assert run.status == "complete" and run.n_hands == 1200
    assert run.content_digest() == reference
    assert not list(tmp_path.rglob(".*.tmp-*"))
    con = open_store(tmp_path).connect()
    assert con.execute("SELECT count(*), count(DISTINCT hand_id) FROM hands").fetchone() == (
        1200,
        1200,
    )


def test_ctrl_c_then_resume(tmp_path: Path, reference: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [*CLI, "simulate", "--data", str(tmp_path), "-q", *ARGS, *SLOW, "--workers", "2"]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, start_new_session=True, preexec_fn=interruptible,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    _wait_for_shards(store.run_dir(tmp_path, "r"), 2, proc)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends to the foreground group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().count("\n") == 0
    assert only_run(tmp_path).status == "interrupted"
    done = simulate_cli(*ARGS, "--workers", "2", data=tmp_path)
    assert done.returncode == 0, done.stderr
    assert only_run(tmp_path).content_digest() == reference


def test_killed_worker_then_resume(tmp_path: Path, reference: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [*CLI, "simulate", "--data", str(tmp_path), "-q", *ARGS, *SLOW, "--workers", "2"]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, start_new_session=True, preexec_fn=interruptible,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    _wait_for_shards(store.run_dir(tmp_path, "r"), 1, proc)
    kids = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True)
    pids = [int(p) for p in kids.stdout.split()]
    # The pool's workers (and possibly a resource tracker); kill one worker.
    workers = [p for p in pids if "resource_tracker" not in _cmdline(p)]
    assert workers, pids
    os.kill(workers[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:  # it finished the run before the kill landed
        assert only_run(tmp_path).content_digest() == reference
        return
    assert proc.returncode == 1, err
    assert "worker process died" in err and "Traceback" not in err
    assert only_run(tmp_path).status == "failed"
    done = simulate_cli(*ARGS, "--workers", "2", data=tmp_path)
    assert done.returncode == 0, done.stderr
    assert only_run(tmp_path).content_digest() == reference


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_disk_full_then_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = spec(200)
    real = store.atomic_write
    calls = {"n": 0}

    def failing(path: Path, data: bytes) -> None:
        if path.suffix == ".parquet" and path.parent.name in ("hands", "events"):
            calls["n"] += 1
            if calls["n"] == 5:  # the third shard's hands file
                tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
                tmp.write_bytes(data[:10])  # half-written, as a full disk leaves it
                try:
                    raise OSError(errno.ENOSPC, "No space left on device")
                except OSError:
                    tmp.unlink()
                    raise store.StoreError(f"disk full while writing {path}") from None
        real(path, data)

    monkeypatch.setattr(store_files, "atomic_write", failing)
    with pytest.raises(store.StoreError, match="disk full"):
        runner.simulate(s, tmp_path / "x")
    run = only_run(tmp_path / "x")
    assert run.status == "failed" and len(run.shards) == 2
    assert run.read_table("events").num_rows == sum(sh["events"] for sh in run.shards)
    monkeypatch.setattr(store_files, "atomic_write", real)
    runner.simulate(s, tmp_path / "x")
    runner.simulate(s, tmp_path / "y")
    assert only_run(tmp_path / "x").content_digest() == only_run(tmp_path / "y").content_digest()


# ------------------------------------------------------------------ the command line


def test_cli_runs_and_names_run_from_arguments(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        main, ["simulate", "--hands", "30", "--workers", "1", "--data", str(tmp_path), "-q"]
    )
    assert r.exit_code == 0, r.output
    name = spec(30, seed=0, shard_hands=DEFAULT_SHARD_HANDS).default_name()
    assert f"run {name}: 30 hands" in r.output
    r2 = CliRunner().invoke(
        main, ["simulate", "--hands", "30", "--workers", "1", "--data", str(tmp_path), "-q"]
    )
    assert r2.exit_code == 0 and "already complete" in r2.output
    assert open_store(tmp_path).run_names() == [name]


def test_data_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAOHUZI_DATA", str(tmp_path / "env"))
    r = CliRunner().invoke(main, ["simulate", "-n", "10", "-w", "1", "-q", "--run", "e"])
    assert r.exit_code == 0, r.output
    assert open_store(tmp_path / "env").run_names() == ["e"]


def test_plain_progress_lines_when_not_a_terminal(tmp_path: Path) -> None:
    r = subprocess.run(
        [*CLI, "simulate", "--data", str(tmp_path), "-n", "40", "-w", "1", "--run", "q"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0
    assert "40/40 hands (100%)" in r.stderr and "\x1b[" not in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "nope"], "unknown rule preset 'nope'"),
        (["--set", "min_huxi"], "malformed rule override"),
        (["--set", "colour=red"], "unknown rule switch"),
        (["--policies", "random,nope,random"], "policy 'nope'"),
        (["--policies", "random,random"], "2 policies given for 3 seats"),
        (["--run", "a/b"], "bad run name"),
        (["--hands", "0"], "--hands"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    r = CliRunner().invoke(main, ["simulate", "--data", str(tmp_path), "-n", "5", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output and r.output.strip().count("\n") == 0
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_unwritable_data_dir(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = simulate_cli("-n", "5", data=blocker / "sub")
    assert r.returncode == 2
    assert r.stderr.startswith("Error: cannot write to data directory")
    assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr


def test_other_arguments_on_existing_run(tmp_path: Path) -> None:
    base = ["simulate", "--data", str(tmp_path), "-q", "-w", "1", "--run", "x"]
    assert CliRunner().invoke(main, [*base, "-n", "20"]).exit_code == 0
    r = CliRunner().invoke(main, [*base, "-n", "30"])
    assert r.exit_code == 2
    assert "run 'x' was recorded with deals=20, not 30" in r.output
    assert r.output.strip().count("\n") == 0


def test_catalog_not_refreshed_is_said_bug(tmp_path: Path) -> None:
    # With a directory in place of paohuzi.duckdb, simulate exited 0 with no word that the
    # catalog was not refreshed.
    (tmp_path / "paohuzi.duckdb").mkdir()
    r = CliRunner().invoke(
        main, ["simulate", "--data", str(tmp_path), "-n", "8", "-w", "1", "-q", "--run", "x"]
    )
    assert r.exit_code == 0, r.output
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("Warning: run x is recorded, but the catalog")
    assert "was not refreshed (StoreError: the catalog" in r.stderr
    assert "paohuzi.duckdb is a directory, not a regular file" in r.stderr
    # the run is there, and readers answer from it
    s = CliRunner().invoke(main, ["stats", "--data", str(tmp_path), "--json"])
    assert s.exit_code == 0 and json.loads(s.stdout)["runs"][0]["hands"] == 8
