"""The dashboard on a store that changes while it runs (issue 42), through AppTest: a run
added, resumed, removed with rm, or damaged by an edit in place shows in the next render
after the refresh interval (dashboard.db on replay.store.snapshot.LiveStore)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from dash_helpers import copy_store, run_page
from edit_helpers import edit_in_place

from paohuzi.cli.main import main


def _simulate(data: Path, run: str, n: int) -> None:
    r = CliRunner().invoke(main, ["simulate", "--data", str(data), "--run", run, "-n", str(n),
                                  "--seed", "5", "-w", "1", "-q", "--shard-hands", "32"])  # fmt: skip
    assert r.exit_code == 0, r.output


def _overview_runs(at: object) -> str:
    return " ".join(str(df.value.to_csv()) for df in at.table)  # type: ignore[attr-defined]


def _page_text(at: object) -> str:
    parts = [m.value for m in at.markdown]  # type: ignore[attr-defined]
    parts += [e.value for e in at.error] + [w.value for w in at.warning]  # type: ignore[attr-defined]
    return " ".join(str(p) for p in parts) + _overview_runs(at)


def test_the_dashboard_sees_runs_added_resumed_removed_and_damaged(
    store_dir: Path,
    tmp_path: Path,
    use_store,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setenv("PAOHUZI_REFRESH", "0.2")
    data = copy_store(store_dir, tmp_path / "d", ["base"])
    use_store(data)
    at = run_page("overview")
    assert not at.exception and "base" in _overview_runs(at) and "late" not in _overview_runs(at)
    _simulate(data, "late", 64)  # a run added
    at = run_page("overview")
    assert not at.exception and "late" in _overview_runs(at)
    from replay.store.manifest import read_manifest, write_manifest

    run = data / "runs" / "run=late"
    m = read_manifest(run)  # as a writer killed after its first shard leaves it
    m["shards"] = sorted(m["shards"], key=lambda s: s["index"])[:1]
    m["status"], m["progress"] = "interrupted", {"shards": 1, "hands": 32}
    write_manifest(run, m)
    at = run_page("overview")
    assert ",late,hunan,3,random ×3,32,interrupted (32 of 64)," in _overview_runs(at)
    _simulate(data, "late", 64)  # resumed
    at = run_page("overview")
    assert ",late,hunan,3,random ×3,64,complete," in _overview_runs(at)
    shutil.rmtree(run)  # removed with rm
    at = run_page("overview")
    assert not at.exception and "late" not in _overview_runs(at)
    # edited in place: same size, mtime put back
    edit_in_place(data / "runs" / "run=base" / "hands" / "part-00000.parquet", 0x33)
    deadline = time.monotonic() + 30
    while "Run base is left out" not in _page_text(at := run_page("overview")):
        assert time.monotonic() < deadline, _page_text(at)
        time.sleep(0.3)
