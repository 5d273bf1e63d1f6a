"""One writer (issue 61): every producer of hands — ``simulate`` inline and in a process pool,
``paohuzi import`` (files, ``--jsonl``), ``POST /runs/{run}/hands`` and ``paohuzi play`` —
lists its shards through :meth:`replay.store.write.RunWriter.commit`, once per shard its
manifest lists; no module outside the writer creates a run, writes a shard's table file, takes
the import lock or clears a first write; and the reading layer imports nothing that writes.
The writer's own rules: a retried shard listed once, a stopped run marked, a busy run refused.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.store.manifest import RunBusy, RunLock, read_manifest
from replay.store.write import RunWriter, ShardTables

ROOT = Path(__file__).resolve().parents[3]
SIM = ["simulate", "-q", "-n", "128", "--seed", "5", "--shard-hands", "64"]


@pytest.fixture
def commits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, bool]]:
    """``(run, shard index, newly listed)`` of every call of the writer's commit."""
    seen: list[tuple[str, int, bool]] = []
    real = RunWriter.commit

    def counted(self: RunWriter, shard: ShardTables | dict[str, Any]) -> bool:
        listed = real(self, shard)
        index = shard.index if isinstance(shard, ShardTables) else shard["index"]
        seen.append((self.name, index, listed))
        return listed

    monkeypatch.setattr(RunWriter, "commit", counted)
    return seen


def _cli(*args: str, stdin: str | None = None) -> str:
    r = CliRunner().invoke(main, list(args), input=stdin)
    assert r.exit_code == 0, r.output
    return r.output


def _listed(data: Path) -> set[tuple[str, int]]:
    """``(run, shard index)`` of every shard the store's manifests list."""
    out = set()
    for path in sorted((data / "runs").glob("run=*")):
        for s in read_manifest(path)["shards"]:
            out.add((path.name.removeprefix("run="), s["index"]))
    return out


def test_every_producer_commits_through_the_writer(
    tmp_path: Path, commits: list[tuple[str, int, bool]]
) -> None:
    sim, imp = tmp_path / "sim", tmp_path / "imp"
    _cli(*SIM, "--data", str(sim), "--run", "inline", "-w", "1")
    _cli(*SIM, "--data", str(sim), "--run", "pool", "-w", "2")
    _cli(*SIM, "--data", str(sim), "--run", "pool", "-w", "2")  # confirmed: nothing to list
    assert sorted(commits) == [(r, i, True) for r in ("inline", "pool") for i in (0, 1)]
    assert _listed(sim) == {(r, i) for r, i, _ in commits}

    commits.clear()
    files = []
    for h in range(6):
        f = tmp_path / f"h{h}.json"
        _cli("export", "inline", str(h), "--data", str(sim), "-o", str(f))
        files.append(f)
    _cli("import", str(files[0]), str(files[1]), "--data", str(imp), "--run", "files")
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(json.dumps(json.loads(f.read_text())) + "\n" for f in files[2:4]))
    _cli("import", "--jsonl", str(batch), "--data", str(imp), "--run", "lines")

    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app

    body = "".join(json.dumps(json.loads(f.read_text())) + "\n" for f in files[4:])
    headers = {"content-type": "application/x-ndjson", "authorization": "Bearer t0ken"}
    with TestClient(create_app(imp, import_token="t0ken")) as client:
        r = client.post("/runs/http/hands", content=body.encode(), headers=headers)
    assert r.status_code == 200 and r.json()["accepted"] == 2, r.text
    out = _cli("play", "--data", str(imp), "--seed", "21", "--name", "ann", "--compare", "none",
               "--no-review", stdin="1\n" * 300)  # fmt: skip
    assert "stored as run play hand 0" in out
    assert sorted(commits) == [(r, 0, True) for r in ("files", "http", "lines", "play")]
    assert _listed(imp) == {(r, i) for r, i, _ in commits}


def test_a_shard_reported_twice_is_listed_once_and_a_stopped_run_is_marked(
    tmp_path: Path,
) -> None:
    from engine.rules import find_rules
    from replay.record.runner import new_manifest
    from replay.record.shard import play_shard
    from replay.record.spec import RunSpec

    spec = RunSpec(find_rules("hunan"), ("random",) * 3, seed=3, deals=40, shard_hands=16)
    with RunWriter(tmp_path, "r") as w:
        w.create(new_manifest(spec, "r", ["test"]))
        w.start()
        entry = play_shard(spec, 0, w.path)
        assert w.commit(entry) is True
        assert w.commit(entry) is False  # a retried task's second report
        with pytest.raises(RunBusy), RunWriter(tmp_path, "r"):
            pass  # one writer per run
        with pytest.raises(RuntimeError), RunWriter(tmp_path, "r2") as w2:
            w2.create(new_manifest(spec, "r2", ["test"]))
            w2.start()
            raise RuntimeError("a worker died")
    m = read_manifest(w.path)
    assert m["status"] == "running" and [s["index"] for s in m["shards"]] == [0]
    assert m["progress"]["shards"] == 1 and m["progress"]["hands"] == entry["hands"] > 0
    m2 = read_manifest(w2.path)
    assert m2["status"] == "failed" and m2["error"] == "a worker died"
    with RunLock(w.path):  # the lock is released
        pass


#: Calls reserved to the writer (replay/store/write/): creating a run's manifest, writing a
#: shard's table file, the import lock, clearing an interrupted first write — each with the
#: modules that define it.
WRITER_ONLY = {
    "Manifest.new": {"replay.store.manifest"},
    "write_shard_file": {"replay.store.files"},
    "ImportLock": {"replay.store.manifest"},
    "clear_first_write": {"replay.store.manifest"},
}
#: Who else rewrites a manifest, and why: a listed shard's missing derived files and the
#: rollup (``paohuzi index``), a run's stored reviews and duplicate comparisons (additive
#: lists, no hand), the definition and its paced writer.
MANIFEST_WRITERS = {
    "replay.derived.indexer",
    "replay.store.comparisons",
    "replay.store.manifest",
    "replay.store.reviews",
}
#: What writes: the names a reading module may not use, and the writing modules.
WRITES = {
    "write_manifest", "ManifestWriter", "write_shard_file", "write_derived", "atomic_write",
    "write_json", "RunLock", "ImportLock", "clear_first_write", "cleanup_temp",
    "refresh_catalog", "write_summary", "write_facts", "write_derived_table", "write_shard",
    "RunWriter", "import_hands",
}  # fmt: skip
WRITING_MODULES = ("replay.store.write", "replay.record", "replay.derived.indexer")


def _modules() -> dict[str, ast.Module]:
    out = {}
    for pkg in ("engine", "replay", "paohuzi", "dashboard"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            out[name] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return out


def _uses(tree: ast.Module) -> set[str]:
    """The names a module imports, calls or reads as an attribute (``Manifest.new`` kept
    whole), and the modules it imports from."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.add(f"module:{node.module}")
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(f"module:{a.name}" for a in node.names)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
            if isinstance(node.value, ast.Name):
                out.add(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name):
            out.add(node.id)
    return out


def test_no_module_outside_the_writer_creates_runs_or_lists_shards() -> None:
    uses = {name: _uses(tree) for name, tree in _modules().items()}
    outside = [n for n in uses if not n.startswith("replay.store.write")]
    for call, defined in WRITER_ONLY.items():
        users = sorted(n for n in outside if call in uses[n] and n not in defined)
        assert users == [], f"{call} outside replay/store/write: {users}"
    writers = {n for n in outside if "write_manifest" in uses[n]}
    assert writers == MANIFEST_WRITERS, sorted(writers ^ MANIFEST_WRITERS)
    # the reading layers import nothing that writes
    for n in sorted(uses):
        if n.startswith(("replay.replayer", "replay.analysis")):
            bad = sorted(uses[n] & WRITES) + sorted(
                m for m in uses[n] if m.startswith("module:") and m[7:].startswith(WRITING_MODULES)
            )
            assert bad == [], f"{n} uses what writes the store: {bad}"
