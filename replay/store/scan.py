"""What the store holds: its runs, read from their manifests, and what is wrong with them.

The dashboard reads only the shard files a manifest lists (docs/LOG_FORMAT.md §1), and only
those that are present with the size and row count the manifest gives (the Parquet footer is
read, not the data); a run with a missing, truncated or unreadable shard is left out with a
one-line reason instead of breaking every query. No streamlit here.

>>> import tempfile
>>> s = scan_store(tempfile.mkdtemp())
>>> s.exists, s.runs, s.usable_runs
(True, (), ())
>>> scan_store("/nonexistent/paohuzi").exists
False
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from engine.errors import PaohuziError
from engine.rules import PRESETS, RuleSet
from replay.store.layout import MANIFEST_NAME
from replay.store.manifest import read_manifest

TABLES = ("hands", "events")


@dataclass(frozen=True)
class RunInfo:
    """One run as the dashboard sees it."""

    name: str
    status: str
    writing: bool  # status "running" and its writer is alive
    hands: int  # hands in the listed shards
    hands_target: int
    events: int
    rules: str  # the preset name, or the base preset with its changed switches
    rules_preset: str | None
    players: int
    ruleset: str
    huayang: str
    level: str  # 名堂 level: the 花样 (basic / half / full), or "luzhou-a" / "luzhou-b"
    huangzhuang_rotate: int  # the n-th consecutive 荒庄 passes the deal on
    min_huxi: int
    policies: tuple[str, ...]  # per seat, rotation 0
    duplicate: bool
    rotations: int
    seed: int | None
    created: str
    rules_items: tuple[tuple[str, Any], ...] = field(default=(), repr=False)  # the rule set
    files: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # (table, path)
    problem: str | None = None  # why the run cannot be read

    @property
    def usable(self) -> bool:
        return self.problem is None and self.hands > 0

    def ruleset_obj(self) -> RuleSet:
        """The run's :class:`~engine.rules.RuleSet` (from its manifest)."""
        return RuleSet.from_dict(dict(self.rules_items))

    @property
    def policy_names(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.policies)))

    @property
    def state(self) -> str:
        """complete / being written / stopped (running, writer gone) / interrupted / failed."""
        if self.status == "running":
            return "being written" if self.writing else "stopped"
        return self.status


@dataclass(frozen=True)
class StoreState:
    """The data directory at one moment; ``signature`` changes whenever a manifest does."""

    root: str
    exists: bool
    runs: tuple[RunInfo, ...]
    signature: str

    @property
    def usable_runs(self) -> tuple[RunInfo, ...]:
        return tuple(r for r in self.runs if r.usable)

    def run(self, name: str) -> RunInfo | None:
        return next((r for r in self.runs if r.name == name), None)

    def files(self, table: str, runs: tuple[str, ...] | None = None) -> list[str]:
        """The listed shard files of ``table`` over the usable runs (or the named ones)."""
        return [
            p
            for r in self.usable_runs
            if runs is None or r.name in runs
            for t, p in r.files
            if t == table
        ]

    def messages(self) -> list[tuple[str, str]]:
        """``(level, text)`` notes for the page: info / warning / error."""
        out: list[tuple[str, str]] = []
        if not self.exists:
            out.append(
                (
                    "error",
                    f"No store at {self.root}. Create one with `paohuzi simulate --data"
                    f" {self.root}` or `make demo`.",
                )
            )
            return out
        if not self.runs:
            out.append(
                (
                    "error",
                    f"The store {self.root} has no runs yet. Record some with `paohuzi"
                    " simulate` (or `make demo`).",
                )
            )
            return out
        for r in self.runs:
            if r.problem is not None:
                out.append(("error", f"Run {r.name} is left out: {r.problem}"))
            elif r.status == "running" and r.writing:
                out.append(
                    (
                        "warning",
                        f"Run {r.name} is still being written ({r.hands:,} of"
                        f" {r.hands_target:,} hands so far); its numbers will change.",
                    )
                )
            elif r.hands == 0:
                out.append(("info", f"Run {r.name} has no finished shard yet."))
            elif r.hands < r.hands_target:
                out.append(
                    (
                        "info",
                        f"Run {r.name} is {r.state} at {r.hands:,} of {r.hands_target:,}"
                        " hands; the same `paohuzi simulate` command resumes it.",
                    )
                )
        if self.runs and not self.usable_runs:
            out.append(("error", "No run can be shown yet."))
        return out


def signature(root: str | Path) -> str:
    """A short digest of every manifest's (name, mtime, size): it changes when a run does."""
    h = hashlib.sha1(str(root).encode())
    runs = Path(root) / "runs"
    try:
        entries = sorted(os.scandir(runs), key=lambda e: e.name)
    except OSError:
        return h.hexdigest()[:16]
    for e in entries:
        if not e.name.startswith("run="):
            continue
        try:
            st = os.stat(Path(e.path) / MANIFEST_NAME)
        except OSError:
            continue
        h.update(f"{e.name}:{st.st_mtime_ns}:{st.st_size};".encode())
    return h.hexdigest()[:16]


def rules_label(rules: dict[str, Any], preset: str | None) -> str:
    """The preset name, or the closest preset and the switches that differ.

    >>> rules_label(RuleSet(min_huxi=10).to_dict(), None)
    'hunan min_huxi=10'
    >>> rules_label(RuleSet().to_dict(), "hunan")
    'hunan'
    """
    if preset:
        return preset
    best, diff = "custom", None
    for name, p in PRESETS.items():
        d = {k: v for k, v in p.to_dict().items() if rules.get(k) != v}
        if diff is None or len(d) < len(diff):
            best, diff = name, d
    changed = " ".join(f"{k}={rules.get(k)}" for k in sorted(diff or {}))
    return f"{best} {changed}".strip()


def _writer_alive(run_path: Path) -> bool:
    """Whether the pid in ``.lock`` is alive (we never take the lock: a writer starting at
    that moment would think the run busy)."""
    try:
        pid = int((run_path / ".lock").read_text().strip() or "0")
    except (OSError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_files(
    run_path: Path, shards: list[dict[str, Any]]
) -> tuple[list[tuple[str, str]], str | None]:
    files: list[tuple[str, str]] = []
    base = run_path.resolve()
    for s in sorted(shards, key=lambda s: s["index"]):
        for table in TABLES:
            entry = s["files"][table]
            path = (base / entry["path"]).resolve()
            if not path.is_relative_to(base):
                return [], f"shard path {entry['path']!r} is outside the run folder"
            try:
                size = path.stat().st_size
            except OSError:
                return [], f"shard file {path} is missing"
            if "bytes" in entry and size != entry["bytes"]:
                return [], (
                    f"shard file {path} has {size:,} bytes, the manifest says {entry['bytes']:,}"
                    " (corrupt or truncated)"
                )
            try:
                rows = pq.read_metadata(path).num_rows
            except (OSError, pa.ArrowException) as e:
                return [], f"shard file {path} is corrupt: {str(e).splitlines()[0]}"
            if "rows" in entry and rows != entry["rows"]:
                return (
                    [],
                    f"shard file {path} has {rows:,} rows, the manifest says {entry['rows']:,}",
                )
            files.append((table, str(path)))
    return files, None


def _run_info(run_path: Path) -> RunInfo:
    name = run_path.name.removeprefix("run=")
    try:
        m = read_manifest(run_path)
    except PaohuziError as e:
        return _broken(name, str(e))
    try:
        params = m.get("params", {})
        rules = m.get("rules", {})
        RuleSet.from_dict(rules)
        shards = m.get("shards", [])
        files, problem = _check_files(run_path, shards)
        status = str(m.get("status"))
        return RunInfo(
            name=name,
            status=status,
            writing=status == "running" and _writer_alive(run_path),
            hands=sum(int(s["hands"]) for s in shards),
            hands_target=int(params.get("hands_total") or 0),
            events=sum(int(s["events"]) for s in shards),
            rules=rules_label(rules, m.get("rules_preset")),
            rules_preset=m.get("rules_preset"),
            players=int(rules.get("players", 3)),
            ruleset=str(rules.get("ruleset", "hunan")),
            huayang=str(rules.get("huayang", "half")),
            level=(
                f"luzhou-{rules.get('luzhou_di_mode', 'b')}"
                if rules.get("ruleset") == "luzhou"
                else str(rules.get("huayang", "half"))
            ),
            huangzhuang_rotate=int(rules.get("huangzhuang_rotate", 3)),
            min_huxi=int(rules.get("min_huxi", 15)),
            policies=tuple(params.get("policies") or ()),
            duplicate=bool(params.get("duplicate")),
            rotations=int(params.get("rotations") or 1),
            seed=params.get("seed"),
            created=str(m.get("created", "")),
            rules_items=tuple(sorted(rules.items())),
            files=tuple(files),
            problem=problem,
        )
    except (PaohuziError, KeyError, TypeError, ValueError) as e:
        return _broken(name, f"bad manifest: {e}")


def _broken(name: str, problem: str) -> RunInfo:
    return RunInfo(
        name=name,
        status="unreadable",
        writing=False,
        hands=0,
        hands_target=0,
        events=0,
        rules="?",
        rules_preset=None,
        players=3,
        ruleset="hunan",
        huayang="half",
        level="half",
        huangzhuang_rotate=3,
        min_huxi=15,
        policies=(),
        duplicate=False,
        rotations=1,
        seed=None,
        created="",
        problem=problem,
    )


def scan_store(root: str | Path) -> StoreState:
    """Read every run's manifest under ``root`` and check its listed shard files exist with
    the listed sizes."""
    root_path = Path(root).resolve()
    sig = signature(root_path)
    if not root_path.is_dir():
        return StoreState(str(root_path), False, (), sig)
    runs_dir = root_path / "runs"
    runs: list[RunInfo] = []
    if runs_dir.is_dir():
        for p in sorted(runs_dir.iterdir()):
            if p.name.startswith("run=") and (p / MANIFEST_NAME).exists():
                runs.append(_run_info(p))
    return StoreState(str(root_path), True, tuple(runs), sig)
