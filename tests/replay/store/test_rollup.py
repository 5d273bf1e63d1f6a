"""Run rollups (replay.store.rollup, docs/LOG_FORMAT.md §13): written with every manifest,
the figures from them equal those from the hands, and a rollup edited, truncated, replaced
by another run's, copied from another store or stale is caught, left out with a note, and
the figures then come from the shards' summaries; `index` rebuilds it, `verify` recomputes
it, `doctor` knows its files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.store.manifest import read_manifest, write_manifest
from replay.store.rollup import ROLLUP_KEY, rollup_path
from replay.store.scan import scan_store


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), env=env)
    return r.exit_code, r.stdout, r.stderr


def _simulate(data: Path, run: str, seed: int, *extra: str) -> None:
    code, out, err = _cli("simulate", "--data", str(data), "--run", run, "-n", "160", "--seed",
                          str(seed), "-w", "1", "-q", "--shard-hands", "32", *extra)  # fmt: skip
    assert code == 0, out + err


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("rollup") / "data"
    _simulate(d, "a", 1)
    _simulate(d, "b", 2, "--duplicate")
    return d


@pytest.fixture
def data(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the module's store, to change."""
    return Path(shutil.copytree(pristine, tmp_path / "data", symlinks=True))


def _stats(data: Path, *extra: str, summary: bool = True) -> tuple[dict, str]:
    env = None if summary else {"PAOHUZI_SUMMARY": "0"}
    code, out, err = _cli("stats", "--data", str(data), "--json", *extra, env=env)
    assert code == 0, out + err
    return json.loads(out), err


def _run(data: Path, name: str) -> Path:
    return data / "runs" / f"run={name}"


def test_every_run_has_a_rollup_and_its_figures_are_the_hands(data: Path) -> None:
    state = scan_store(data)
    for name in ("a", "b"):
        info = state.run(name)
        m = read_manifest(_run(data, name))
        k = len(m["shards"])
        assert info is not None and info.rollup_shards == k and info.rollup_problem is None
        assert m[ROLLUP_KEY]["path"] == rollup_path(k) and m[ROLLUP_KEY]["shards"] == k
    assert state.summary_sources() == [
        p for r in state.usable_runs for t, p in r.files if t == "rollup"
    ]
    from_rollups, err = _stats(data)
    assert err == ""
    assert from_rollups == _stats(data, summary=False)[0]
    events, _ = _stats(data, "--events")
    raw_events, _ = _stats(data, "--events", summary=False)
    for r in events["runs"]:
        r.pop("source")
    for r in raw_events["runs"]:
        r.pop("source")
    assert events == raw_events
    code, out, _ = _cli("verify", "--data", str(data))
    assert code == 0, out


def _flip(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x5A
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("damage", ["edited", "truncated", "other-run", "other-store", "stale"])
def test_a_bad_rollup_is_not_believed(data: Path, tmp_path: Path, damage: str) -> None:
    want, _ = _stats(data, summary=False)
    path = _run(data, "a") / rollup_path(5)
    if damage == "edited":
        _flip(path)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:-100])
    elif damage == "other-run":
        other_run = read_manifest(_run(data, "b"))[ROLLUP_KEY]["path"]
        shutil.copyfile(_run(data, "b") / other_run, path)
    elif damage == "other-store":  # its file and its manifest entry, from a store like this one
        other = tmp_path / "other"
        _simulate(other, "a", 7)
        shutil.copyfile(_run(other, "a") / rollup_path(5), path)
        m = read_manifest(_run(data, "a"))
        m[ROLLUP_KEY] = read_manifest(_run(other, "a"))[ROLLUP_KEY]
        _write_raw(_run(data, "a"), m)
    else:  # a summary rewritten since, with its entry: the rollup was made from another
        _rewrite_first_summary(_run(data, "a"))
    info = scan_store(data).run("a")
    assert info is not None and info.problem is None and info.rollup_problem is not None
    assert info.rollup_shards == 0 and info.summary_problem is None
    if damage == "stale":
        assert "stale" in info.rollup_problem
        return
    got, err = _stats(data)
    assert "run a: its rollup is not used" in err and "paohuzi index" in err
    assert got == want  # the figures come from the shards' summaries
    code, out, _ = _cli("verify", "--data", str(data))
    if damage == "other-store":  # its entry does not stand for these summaries: not used
        assert code == 0 and "is not used" in out, out
    else:  # it claims to: a problem
        assert code != 0 and "rollup" in out, out
    code, out, err = _cli("index", "--data", str(data), "-q")
    assert code == 0, out + err
    info = scan_store(data).run("a")
    assert info is not None and info.rollup_problem is None and info.rollup_shards == 5
    assert _stats(data)[0] == want
    assert _cli("verify", "--data", str(data))[0] == 0


def _rewrite_first_summary(run: Path) -> None:
    """Shard 0's summary file rewritten (one ``values`` count changed) with its manifest
    entry: a summary the rollup was not made from."""
    import hashlib

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from replay.derived.summaries import summary_bytes

    m = read_manifest(run)
    shard = next(s for s in m["shards"] if s["index"] == 0)
    entry = shard["files"]["summary"]
    path = run / entry["path"]
    t = pq.read_table(path)
    first_value = pc.index(t.column("kind"), "values").as_py()
    n = t.column("n").to_pylist()
    n[first_value] += 1
    t = t.set_column(t.schema.get_field_index("n"), "n", pa.array(n, pa.int64()))
    raw = summary_bytes(t)
    path.write_bytes(raw)
    entry.update(bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest())
    _write_raw(run, m)


def _write_raw(run_path: Path, m: dict) -> None:
    """The manifest as given (no rollup refreshed): what a hand editing it leaves."""
    from replay.store.files import write_json
    from replay.store.layout import MANIFEST_NAME

    write_json(run_path / MANIFEST_NAME, m)


def test_a_consistent_but_false_rollup_is_found_by_verify(data: Path) -> None:
    """A rollup rewritten with its manifest entry passes the readers' checks; verify
    recomputes it from the summaries and names the difference."""
    import hashlib

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from replay.store.rollup import rollup_bytes

    run = _run(data, "a")
    path = run / rollup_path(5)
    t = pq.read_table(path)
    n = t.column("n")
    t = t.set_column(t.schema.get_field_index("n"), "n", pc.add(n, 1))
    raw = rollup_bytes(t)
    path.write_bytes(raw)
    m = read_manifest(run)
    m[ROLLUP_KEY].update(bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest())
    _write_raw(run, m)
    code, out, _ = _cli("verify", "--data", str(data))
    assert code != 0 and "does not match the summaries it rolls up" in out


def test_the_rollup_grows_with_the_run_and_equals_one_made_at_once(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Imports append shards: each manifest write extends the rollup from the one before;
    the result has the same bytes as a rollup made from every summary at once (index)."""
    run = _run(data, "a")
    m = read_manifest(run)
    full = m[ROLLUP_KEY]
    shards = sorted(m["shards"], key=lambda s: s["index"])
    m["shards"] = shards[:2]
    m.pop(ROLLUP_KEY)
    write_manifest(run, m)
    assert read_manifest(run)[ROLLUP_KEY]["shards"] == 2
    m = read_manifest(run)
    m["shards"] = shards
    write_manifest(run, m)  # from the 2-shard rollup and the 3 summaries after
    grown = read_manifest(run)[ROLLUP_KEY]
    assert grown["shards"] == 5 and grown["sha256"] == full["sha256"]
    assert sorted(p.name for p in (run / "rollup").iterdir()) == ["part-00002.parquet",
                                                                  "part-00005.parquet"]  # fmt: skip
    write_manifest(run, read_manifest(run))  # kept for its grace period (600 s)
    assert len(list((run / "rollup").iterdir())) == 2
    monkeypatch.setenv("PAOHUZI_ROLLUP_GRACE", "0")
    write_manifest(run, read_manifest(run))  # the earlier one goes at a write past it
    assert [p.name for p in (run / "rollup").iterdir()] == ["part-00005.parquet"]


def test_a_gap_in_the_shards_ends_what_the_rollup_covers(data: Path) -> None:
    run = _run(data, "a")
    m = read_manifest(run)
    m["shards"] = [s for s in m["shards"] if s["index"] != 2]
    m.pop(ROLLUP_KEY)
    write_manifest(run, m)
    assert read_manifest(run)[ROLLUP_KEY]["shards"] == 2
    info = scan_store(data).run("a")
    assert info is not None and info.rollup_shards == 2 and info.rollup_problem is None
    summaries = [p for t, p in info.files if t == "summary"]
    rollup = [p for t, p in info.files if t == "rollup"]
    sources = scan_store(data).summary_sources()
    assert rollup[0] in sources and summaries[2] in sources and summaries[0] not in sources


def test_doctor_knows_the_rollup_files(data: Path) -> None:
    run = _run(data, "a")
    (run / "rollup" / ".part-00005.parquet.tmp-999999999").write_bytes(b"x")  # a dead writer's
    code, out, err = _cli("doctor", "--data", str(data))
    assert code == 1 and "1 left-over" in out + err, out + err  # that one only
    assert "rollup/.part-00005.parquet.tmp-999999999" in out  # a left-over of ours
    assert "rollup/part-00005.parquet" not in out.replace(".part", "")  # the run's own file


def test_a_run_being_written_rolls_up_every_few_shards(data: Path) -> None:
    """While a run's status is ``running``, a manifest write leaves its rollup until 16
    shards (or a quarter of those covered) are past it; the readers read the summaries after
    it. Its last write brings it up to date."""
    run = _run(data, "b")
    m = read_manifest(run)
    shards = sorted(m["shards"], key=lambda s: s["index"])
    assert len(shards) >= 6
    m.pop(ROLLUP_KEY)
    m["status"], m["shards"] = "running", shards[:3]
    write_manifest(run, m)
    assert ROLLUP_KEY not in read_manifest(run)  # 3 shards: not yet
    state = scan_store(data)
    assert state.run("b").rollup_shards == 0  # type: ignore[union-attr]
    m = read_manifest(run)
    m["status"], m["shards"] = "complete", shards
    write_manifest(run, m)
    assert read_manifest(run)[ROLLUP_KEY]["shards"] == len(shards)


def test_index_rebuilds_a_rollup_in_steps_and_resumes_after_a_kill(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``paohuzi index`` rebuilds a missing rollup CHECKPOINT shards at a time, each step
    listed in the manifest: killed during the rebuild, it leaves a usable rollup of the
    shards so far, and the next index goes on from there (never from the first shard);
    the result has the bytes of a rollup made at once."""
    from replay.store import rollup

    run = _run(data, "a")
    m = read_manifest(run)
    whole = m[ROLLUP_KEY]["sha256"]
    want, _ = _stats(data)
    m.pop(ROLLUP_KEY)
    write_manifest(run, m, rollup=False)
    monkeypatch.setattr(rollup, "CHECKPOINT", 2)
    real, starts, kill = rollup._write, [], [3]

    def step(path: Path, cov: list, old: object) -> dict:
        starts.append(old["shards"] if isinstance(old, dict) else 0)
        if len(starts) in kill:
            raise KeyboardInterrupt  # as a Ctrl-C during the third step
        return real(path, cov, old)

    monkeypatch.setattr(rollup, "_write", step)
    code, _, _ = _cli("index", "--data", str(data), "-q")
    assert code != 0 and starts == [0, 2, 4]
    assert read_manifest(run)[ROLLUP_KEY]["shards"] == 4  # the last step's, listed
    info = scan_store(data).run("a")
    assert info is not None and info.rollup_shards == 4 and info.rollup_problem is None
    assert _stats(data)[0] == want  # the rollup of 4 shards and the 5th summary
    starts.clear()
    kill.clear()
    code, out, err = _cli("index", "--data", str(data), "-q")
    assert code == 0, out + err
    assert starts == [4]  # on from the listed step
    entry = read_manifest(run)[ROLLUP_KEY]
    assert entry["shards"] == 5 and entry["sha256"] == whole
