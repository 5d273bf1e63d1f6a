"""Managing a store's runs: summaries (``paohuzi runs``), filtered lists of hands
(``paohuzi hands``) and removal (``paohuzi rm``).

>>> hand_ranges({"shards": [{"index": 0, "first_hand": 0, "hands": 500},
...                          {"index": 2, "first_hand": 1000, "hands": 500},
...                          {"index": 3, "first_hand": 1500, "hands": 500}]})
[(0, 499), (1000, 1999)]
>>> format_ranges([(0, 499), (1000, 1999)])
'hands 0–499, 1000–1999'
>>> mingtang_mask("红胡") == (1 << 0) | (1 << 10)
True
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import CorruptLog, InvalidNotation, PaohuziError, did_you_mean
from replay.store.layout import MANIFEST_NAME, StoreError, check_run_name, run_dir
from replay.store.manifest import Manifest, RunLock
from replay.store.scan import rules_label, run_state, writer_alive

#: ``paohuzi hands`` shows at most this many hands unless ``--limit`` says otherwise.
DEFAULT_LIMIT = 50

#: The ``hands`` columns ``paohuzi hands`` lists.
HAND_COLUMNS = (
    "hand_id",
    "session",
    "dealer",
    "outcome",
    "winner",
    "source",
    "huxi",
    "fan",
    "score",
    "mingtang",
    "n_events",
)


# ---------------------------------------------------------------------------------------------
# Hand ranges
# ---------------------------------------------------------------------------------------------


def hand_ranges(manifest: dict[str, Any]) -> list[tuple[int, int]]:
    """The hand ids the manifest's shards list, as merged inclusive ``(first, last)`` ranges."""
    spans = []
    for s in manifest.get("shards", []):
        try:
            first, n = int(s["first_hand"]), int(s["hands"])
        except (KeyError, TypeError, ValueError):
            continue
        if n > 0:
            spans.append((first, first + n - 1))
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def format_ranges(ranges: Sequence[tuple[int, int]]) -> str:
    """``hands 0–499, 1000–1999`` (``hand 7`` for one, ``no hands`` for none)."""
    if not ranges:
        return "no hands"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return f"hand {ranges[0][0]}"
    return "hands " + ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in ranges)


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------


def _disk_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, f)).st_size
    return total


def run_policies_label(run: Any) -> str:
    """A run's policies as ``paohuzi stats`` names them (:func:`replay.store.params.
    policies_label`): a simulated run's seats', or the distinct policies the hands of a run
    of imported hands were played by (its ``params.seat_policies``; past the classes a
    manifest keeps, read from its hands files' ``policy_*`` columns)."""
    from replay.store.params import RunParams, played_policies, policies_label

    raw = run.manifest.get("params") or {}
    listed = RunParams.of(raw).policies
    if listed:
        return policies_label(listed)
    if raw.get("seat_policies") and not raw.get("seat_policies_overflow"):
        return policies_label(played_policies(raw["seat_policies"]))
    return policies_label(_hands_policies(run))


def _hands_policies(run: Any) -> tuple[str, ...]:
    """The distinct policies of a run's hands, from the ``policy_*`` columns of its listed
    hands files (a file that cannot be read is left out: its run is another check's)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from replay.store.check import resolve_shard_path
    from replay.store.params import played_policies

    players = int((run.manifest.get("rules") or {}).get("players", 3))
    cols = [f"policy_{s}" for s in range(players)]
    seen: set[tuple[str | None, ...]] = set()
    for shard in run.manifest.get("shards") or ():
        try:
            rel = shard["files"]["hands"]["path"]
            t = pq.read_table(resolve_shard_path(run.path, rel), columns=cols)
        except (KeyError, TypeError, OSError, ValueError, pa.ArrowException):
            continue
        seen.update(zip(*(t.column(c).to_pylist() for c in cols), strict=True))
    return played_policies(seen)


def run_summaries(st: Any) -> list[dict[str, Any]]:
    """One summary per run of the store ``st`` (a :class:`replay.store.runs.Store`): name,
    status, rules, policies, hands, bytes on disk, created. A run whose manifest cannot be
    read is listed with status ``unreadable`` and its ``error``."""
    out: list[dict[str, Any]] = []
    for name in st.run_names():
        path = run_dir(st.root, name)
        row: dict[str, Any] = {"run": name, "bytes": _disk_bytes(path)}
        try:
            r = st.run(name)
            m = r.manifest
            row.update(
                status=r.status,
                state=run_state(r.status, r.status == "running" and writer_alive(path)),
                rules=rules_label(m.get("rules") or {}, m.get("rules_preset")),  # as stats
                policies=run_policies_label(r),  # as stats
                hands=r.n_hands,
                created=m.get("created"),
                imported=Manifest(m).imported,
            )
        except (PaohuziError, KeyError, TypeError, AttributeError) as e:
            row.update(status="unreadable", state="unreadable", rules=None, policies=None,
                       hands=None, created=None, imported=None, error=str(e))  # fmt: skip
        out.append(row)
    return out


# ---------------------------------------------------------------------------------------------
# Hands
# ---------------------------------------------------------------------------------------------


def outcome_code(name: str) -> int:
    """An ``OutcomeKind`` from its name (``hu``, ``huangzhuang``, ``tianhu_auto``,
    ``tianhu``, any case) or code."""
    from engine.outcome import OutcomeKind

    t = name.strip()
    if t.isdigit() and int(t) in set(OutcomeKind):
        return int(t)
    try:
        return int(OutcomeKind[t.upper().replace("-", "_")])
    except KeyError:
        names = [k.name.lower() for k in OutcomeKind]
        raise InvalidNotation(
            f"unknown outcome {name!r} (known: {', '.join(names)}){did_you_mean(t, names)}"
        ) from None


def mingtang_mask(name: str) -> int:
    """The ``hands.mingtang`` bits of a 名堂 given by pinyin id (``honghu``) or name
    (``红胡``: every rule set's 名堂 of that name)."""
    from engine.mingtang import REGISTRY
    from replay import schema

    t = name.strip()
    if t.lower() in schema.MINGTANG_BITS:
        return 1 << schema.MINGTANG_BITS[t.lower()]
    mask = 0
    for pinyin, m in REGISTRY.items():
        if m.name == t and pinyin in schema.MINGTANG_BITS:
            mask |= 1 << schema.MINGTANG_BITS[pinyin]
    if not mask:
        raise InvalidNotation(
            f"unknown 名堂 {name!r} (known: {', '.join(schema.MINGTANG_BITS)}, or their names)"
            f"{did_you_mean(t, schema.MINGTANG_BITS)}"
        )
    return mask


@dataclass(frozen=True)
class HandFilter:
    """What ``paohuzi hands`` selects: every given condition must hold."""

    winner: int | None = None
    outcome: int | None = None
    huxi_min: int | None = None
    huxi_max: int | None = None
    mingtang: int | None = None  # a mask: any of its bits
    since: int | None = None  # hand_id ≥ since
    until: int | None = None  # hand_id ≤ until

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition (after ``run = ?``) and its parameters."""
        sql, params = ["run = ?"], []
        for col, op, v in (
            ("winner", "=", self.winner),
            ("outcome", "=", self.outcome),
            ("huxi", ">=", self.huxi_min),
            ("huxi", "<=", self.huxi_max),
            ("hand_id", ">=", self.since),
            ("hand_id", "<=", self.until),
        ):
            if v is not None:
                sql.append(f"{col} {op} ?")
                params.append(v)
        if self.mingtang is not None:
            sql.append("(CAST(mingtang AS INTEGER) & ?) <> 0")
            params.append(self.mingtang)
        return " AND ".join(sql), params


def hand_filter(
    winner: int | None = None,
    outcome: str | None = None,
    huxi_min: int | None = None,
    huxi_max: int | None = None,
    mingtang: str | None = None,
    since: int | None = None,
    until: int | None = None,
) -> HandFilter:
    """The :class:`HandFilter` of the filters as ``paohuzi hands`` takes them: an outcome by
    name (:func:`outcome_code`), a 名堂 by pinyin id or name (:func:`mingtang_mask`);
    :class:`InvalidNotation` for an unknown one."""
    return HandFilter(
        winner=winner,
        outcome=None if outcome is None else outcome_code(outcome),
        huxi_min=huxi_min,
        huxi_max=huxi_max,
        mingtang=None if mingtang is None else mingtang_mask(mingtang),
        since=since,
        until=until,
    )


def named_hand(row: dict[str, Any]) -> dict[str, Any]:
    """A row of :func:`query_hands` as ``paohuzi hands --json`` shows it: the outcome and
    the source by name (lower case), the 名堂 as a list of pinyin ids (changed in place)."""
    from engine.outcome import OutcomeKind, Source  # not the game (engine.state) to name codes
    from replay import schema

    row["outcome"] = OutcomeKind(row["outcome"]).name.lower()
    row["source"] = None if row["source"] is None else Source(row["source"]).name.lower()
    row["mingtang"] = schema.mingtang_names(row["mingtang"] or 0)
    return row


def _hands_cursor(
    st: Any, run: str, flt: HandFilter, limit: int, offset: int, con: Any, state: Any
) -> Any:
    """The checks of :func:`query_hands` and its query, executed: (connection, cursor)."""
    st.run(run)  # StoreError naming the known runs if absent
    state = state if state is not None else st.scan()
    info = state.run(run)
    if info is not None and info.problem is not None:
        raise CorruptLog(f"run {run} is damaged and left out: {info.problem}")
    where, params = flt.where()
    cols = ", ".join(HAND_COLUMNS)
    own = con is None
    if own:
        con = st.connect(state)
    try:
        cur = con.execute(
            f"SELECT {cols} FROM hands WHERE {where} ORDER BY hand_id LIMIT ? OFFSET ?",
            [run, *params, limit, offset],
        )
    except BaseException as e:
        if own:
            con.close()
        raise _read_error(run, e) from None
    return (con if own else None), cur


def _read_error(run: str, e: BaseException) -> BaseException:
    import duckdb

    if isinstance(e, duckdb.Error):
        return StoreError(f"run {run}: cannot read its hands: {str(e).splitlines()[0]}")
    return e


def query_hands(
    st: Any,
    run: str,
    flt: HandFilter = HandFilter(),
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
    con: Any = None,
    state: Any = None,
) -> tuple[list[dict[str, Any]], bool]:
    """The hands of ``run`` matching ``flt`` in hand order, at most ``limit`` of them after
    skipping ``offset``, and whether there are more. Reads the run's checked ``hands`` files
    shard after shard, in batches that double (1, 2, 4 … at most :data:`BATCH_SHARDS`
    shards), and stops once it has them: a page of a big run reads the shards it needs, not
    every shard. DuckDB pushes the filters down into each batch's Parquet scan; memory is
    bounded by ``limit`` and ``offset``. ``con``: a connection to run the queries on (else
    one of its own, in memory: no catalog is opened); ``state``: the store's scan the caller
    made, else one is made here."""
    from replay.store.catalog import duck_connect, relation_sql

    state = state if state is not None else st.scan(manifests=False)  # its files: no manifest
    _checked_run(st, run, state)
    files = state.files("hands", (run,))
    where, params = flt.where()
    cols = ", ".join(HAND_COLUMNS)
    own = con is None
    if own:
        con = duck_connect(":memory:")
    rows: list[tuple[Any, ...]] = []
    want, skip = limit + 1, offset
    try:
        i, step = 0, 1
        while i < len(files) and len(rows) < want:
            batch, i, step = files[i : i + step], i + step, min(2 * step, BATCH_SHARDS)
            got = con.execute(
                f"SELECT {cols} FROM {relation_sql('hands', batch)} WHERE {where}"
                " ORDER BY hand_id LIMIT ?",
                [run, *params, want - len(rows) + skip],
            ).fetchall()
            dropped = min(skip, len(got))
            skip -= dropped
            rows += got[dropped:]
    except BaseException as e:
        raise _read_error(run, e) from None
    finally:
        if own:
            con.close()
    out = [dict(zip(HAND_COLUMNS, r, strict=True)) for r in rows]
    return out[:limit], len(out) > limit


#: The most shards one query of :func:`query_hands` reads.
BATCH_SHARDS = 256


def _checked_run(st: Any, run: str, state: Any) -> None:
    """StoreError naming the known runs when ``run`` is not in ``state``, CorruptLog when it
    is damaged."""
    info = state.run(run)
    if info is None:
        st.run(run)  # StoreError naming the known runs (or the manifest's problem)
        raise StoreError(f"no run {run!r} when the store was read (created since)")
    if info.problem is not None:
        raise CorruptLog(f"run {run} is damaged and left out: {info.problem}")


def stream_hands(
    st: Any,
    run: str,
    flt: HandFilter = HandFilter(),
    limit: int = DEFAULT_LIMIT,
    con: Any = None,
    batch: int = 1000,
    state: Any = None,
) -> Iterator[list[dict[str, Any]]]:
    """The rows :func:`query_hands` selects (at most ``limit``), in batches of at most
    ``batch`` rows: the run is looked up and checked, and the query started, before this
    returns (so an unknown or damaged run raises here); the batches are fetched as they are
    iterated, so memory is bounded by ``batch``. The connection it opens (without ``con``)
    is closed when the iteration ends."""
    own, cur = _hands_cursor(st, run, flt, limit, 0, con, state)

    def batches() -> Iterator[list[dict[str, Any]]]:
        try:
            while True:
                try:
                    got = cur.fetchmany(batch)
                except BaseException as e:
                    raise _read_error(run, e) from None
                if not got:
                    return
                yield [dict(zip(HAND_COLUMNS, r, strict=True)) for r in got]
        finally:
            if own is not None:
                own.close()

    return batches()


# ---------------------------------------------------------------------------------------------
# Removal
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Removal:
    """What ``rm NAME`` removes: the run folder ``path`` if there is one (``linked``: a
    symlink, removed as a link) and the interrupted removals of the run to finish."""

    path: Path
    exists: bool
    linked: bool
    interrupted: tuple[Path, ...]


def plan_removal(root: Path, name: str) -> Removal:
    """What :func:`remove_run` would remove; :class:`StoreError` naming the known runs if
    nothing, or the process removing the run now."""
    from replay.store import leftovers

    check_run_name(name)
    root = Path(root).resolve()
    path = run_dir(root, name)
    pending = leftovers.interrupted_removals(root, name)
    linked = path.is_symlink()
    exists = linked or path.is_dir()
    if not exists and not pending.leftovers:
        if pending.in_use:
            lo = pending.in_use[0]
            raise StoreError(f"run {name} is being removed by process {lo.pid} ({lo.rel})")
        runs = root / "runs"
        known = sorted(
            p.name.removeprefix("run=")
            for p in (runs.iterdir() if runs.is_dir() else [])
            if p.name.startswith("run=") and (p / MANIFEST_NAME).exists()
        )
        raise StoreError(
            f"no run {name!r} in {root} (runs: {', '.join(known) or 'none'})"
            f"{did_you_mean(name, known)}"
        )
    return Removal(path, exists, linked, tuple(lo.path for lo in pending.leftovers))


def remove_run(root: Path, name: str) -> Path:
    """Delete run ``name`` of the store at ``root`` and rebuild the catalog; the folder that
    was removed. Refuses (:class:`StoreError`) while a writer holds the run's lock: the lock
    is taken first, the folder is renamed out of the catalog's sight (``runs/.removing-…``)
    and deleted while the lock is still held, then the catalog is rebuilt.

    An interrupted removal of the run (``runs/.removing-NAME-PID`` whose process is gone: a
    killed ``rm``) is finished first, so it is enough that one exists; it is never rolled
    back, its files being partly deleted. A run folder that is a symlink is removed as a
    link: what it points to is never touched."""
    from replay.store import leftovers
    from replay.store.catalog import refresh_catalog

    plan = plan_removal(root, name)
    for lo in leftovers.interrupted_removals(root, name).leftovers:
        leftovers.remove_leftover(lo)
    path = plan.path
    try:
        if path.is_symlink():
            os.unlink(path)
        elif path.is_dir():
            _check_lock_file(path, name)
            gone = path.parent / f".removing-{name}-{os.getpid()}"
            with RunLock(path):
                os.rename(path, gone)
                shutil.rmtree(gone)
    except OSError as e:
        raise StoreError(f"cannot remove {path}: {e.strerror or e}") from None
    refresh_catalog(path.parent.parent)
    return path


def _check_lock_file(path: Path, name: str) -> None:
    """Refuse a run whose ``.lock`` is not a regular file: taking the lock would open it,
    following a symlink out of the store and truncating its target."""
    from replay.store.fsinfo import file_kind
    from replay.store.leftovers import LOCK_NAME

    with contextlib.suppress(FileNotFoundError):
        mode = os.lstat(path / LOCK_NAME).st_mode
        if not stat.S_ISREG(mode):
            raise StoreError(
                f"run {name}: its {LOCK_NAME} is {file_kind(mode)}, not a regular file "
                "(paohuzi doctor --fix removes it)"
            )
