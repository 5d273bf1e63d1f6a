"""The verifier: re-apply every recorded decision through the engine's checked path and
recompute everything the log claims (``paohuzi verify``).

A lenient reader (STYLE §12): every problem is collected as a :class:`Problem` naming the
run, the hand, the event seq and the reason, and the check goes on with the next hand, the
next shard and the next run. Nothing is dropped silently: a shard that cannot be read
makes each of its hands count as bad.

What is checked:

* **run**: the manifest exists, parses, has the known format and schema version and a valid
  rule set; its shard list is contiguous; each file exists with the size and SHA-256 the
  manifest gives; the progress totals add up; stray Parquet files are reported;
* **shard**: both files are readable Parquet with the columns of :mod:`replay.record.schema`, the
  row counts the manifest gives, hand ids ``first_hand …`` in order, events grouped by hand;
* **hand**: the deck is a permutation of the 80 cards and the dealer a seat; events have
  ``seq`` 0, 1, 2 … in order and as many as ``n_events``; each decision is legal
  (``State.apply_checked``) and its stored ``kind``, ``card``, ``from_seat``, ``forced``,
  ``n_legal`` and ``options`` are what the state says; the log ends exactly at the end of
  the hand; and the recorded outcome (kind, winner, source, hu card, from seat, 胡息, 等, 番,
  score, 名堂, 自摸, deltas, stock left) equals the recomputed one.

Workers (``workers > 1``) check shards in a process pool; the report does not depend on it.

>>> from engine.deck import shuffle_deck
>>> from engine.rules import find_rules
>>> from replay.replayer.hand import HandLog
>>> log = HandLog.from_history(find_rules("hunan"), shuffle_deck(5), 0, [(0, 1)])
>>> print(check_log(log)[0])
replay file seq 0: illegal event: seat 0 plays 胡; legal: 打 一, 打 二, 打 四, 打 六, 打 七, 打 九, 打 十, 打 壹, 打 贰, 打 陆, 打 柒, 打 玖
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.actions import CHI_BASE, action_str, kind_of
from engine.cards import COPIES, DECK_SIZE, NUM_KINDS, card_char
from engine.errors import IllegalAction, InvalidNotation, PaohuziError
from engine.rules import RuleSet
from engine.state import OutcomeKind, State
from replay import store
from replay.record import schema
from replay.replayer.hand import HandLog, game_for, log_from_rows
from replay.store.scan import file_sha256, resolve_shard_path

__all__ = [
    "Problem",
    "VerifyReport",
    "check_log",
    "expected_events",
    "expected_hand",
    "deck_problem",
    "verify_store",
    "verify_shard",
]

#: Columns a reader needs (others are ignored, LOG_FORMAT §9).
HAND_COLUMNS = [
    "hand_id", "dealer", "deck", "outcome", "winner", "source", "hu_card", "from_seat",
    "huxi", "deng", "fan", "score", "mingtang", "zimo", "delta_0", "delta_1", "delta_2",
    "delta_3", "stock_left", "n_events",
]  # fmt: skip
EVENT_COLUMNS = ["hand_id", "seq", "seat", "action", "kind", "card", "from_seat", "forced",
                 "n_legal", "options"]  # fmt: skip
#: Event columns recomputed from the state before each decision.
DERIVED_EVENT_COLUMNS = ("kind", "card", "from_seat", "forced", "n_legal", "options")
#: Outcome columns recomputed from the final state.
OUTCOME_COLUMNS = (
    "outcome", "winner", "source", "hu_card", "from_seat", "huxi", "deng", "fan", "score",
    "mingtang", "zimo", "delta_0", "delta_1", "delta_2", "delta_3", "stock_left", "n_events",
)  # fmt: skip

_DISCARD_KIND = 3
_FACE_KINDS = (3, 4, 5, 6)  # DISCARD, TI, WEI, PAO name a face in their code


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with a log. ``hand`` / ``seq`` are ``None`` when the problem is about a
    whole run or shard; ``hands`` counts the hands it makes unverifiable."""

    run: str
    hand: int | None
    seq: int | None
    reason: str
    shard: int | None = None
    hands: int = 0

    def __str__(self) -> str:
        where = f"run {self.run}" if self.run else "replay file"
        if self.hand is not None:
            where += f" hand {self.hand}"
        elif self.shard is not None:
            where += f" shard {self.shard}"
        if self.seq is not None:
            where += f" seq {self.seq}"
        return f"{where}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "hand": self.hand,
            "seq": self.seq,
            "shard": self.shard,
            "hands": self.hands,
            "reason": self.reason,
        }


# ---------------------------------------------------------------------------------------------
# One hand
# ---------------------------------------------------------------------------------------------


def deck_problem(deck: Sequence[int] | bytes | None) -> str | None:
    """Why ``deck`` is not a permutation of the 80 cards (``None`` if it is)."""
    if deck is None:
        return "the deck is null"
    ks = list(deck)
    if len(ks) != DECK_SIZE:
        return f"the deck has {len(ks)} cards, not {DECK_SIZE}"
    bad = [k for k in ks if not 0 <= k < NUM_KINDS]
    if bad:
        return f"the deck holds card code {bad[0]} (codes are 0…{NUM_KINDS - 1})"
    counts = [0] * NUM_KINDS
    for k in ks:
        counts[k] += 1
    off = [f"{n} × {card_char(k)}" for k, n in enumerate(counts) if n != COPIES]
    if off:
        return "the deck is not a permutation of the 80 cards: " + ", ".join(off)
    return None


# Per action code below the 吃 range: its ActionKind and the face it names (None if none).
_KIND: list[int] = [
    int(kind_of(c)) if c in (0, 1, 2) or 10 <= c < 90 else -1 for c in range(CHI_BASE)
]
_FACE: list[int | None] = [(c - 10) % 20 if 10 <= c < 90 else None for c in range(CHI_BASE)]
_CHI_KIND = 7


def expected_event(state: State, seat: int, action: int) -> tuple[Any, ...]:
    """The derived columns (:data:`DERIVED_EVENT_COLUMNS`) of the event ``(seat, action)``
    taken in ``state`` (before it), as the recorder writes them (docs/LOG_FORMAT.md §4)."""
    if action < CHI_BASE:
        kind = _KIND[action]
        face = _FACE[action]
        card = state.card if face is None else face
    else:
        kind = _CHI_KIND
        card = state.card
    legal = state.pending.get(seat, ())
    return (
        kind,
        card,
        None if kind == _DISCARD_KIND else state.owner,
        state.forced,
        len(legal),
        schema.options_mask(legal) if legal else 0,
    )


def expected_events(state: State, seat: int, action: int) -> dict[str, Any]:
    """:func:`expected_event` as a dict by column name."""
    return dict(zip(DERIVED_EVENT_COLUMNS, expected_event(state, seat, action), strict=True))


def expected_hand(state: State, n_events: int) -> dict[str, Any]:
    """The outcome columns of the ``hands`` row for a finished ``state``."""
    o = state.outcome
    assert o is not None
    res = o.result
    won = res is not None and o.kind != OutcomeKind.HUANGZHUANG
    n = state.n_seats
    row: dict[str, Any] = {
        "outcome": int(o.kind),
        "winner": o.winner,
        "source": None if o.source is None else int(o.source),
        "hu_card": o.card,
        "from_seat": o.from_seat,
        "huxi": res.huxi if won else None,  # type: ignore[union-attr]
        "deng": res.deng if won else None,  # type: ignore[union-attr]
        "fan": res.fan if won else None,  # type: ignore[union-attr]
        "score": res.score if won else None,  # type: ignore[union-attr]
        "mingtang": (
            schema.mingtang_mask(state.rules.ruleset, (m for m, _ in res.mingtang))  # type: ignore[union-attr]
            if won
            else 0
        ),
        "zimo": bool(res.zimo) if won else None,  # type: ignore[union-attr]
        "stock_left": len(state.stock),
        "n_events": n_events,
    }
    for s in range(schema.MAX_SEATS):
        row[f"delta_{s}"] = o.deltas[s] if s < n else None
    return row


def _fmt(col: str, v: Any) -> str:
    if v is None:
        return "null"
    if col in ("card", "hu_card") and isinstance(v, int) and 0 <= v < NUM_KINDS:
        return f"{card_char(v)}({v})"
    if col == "mingtang":
        return "+".join(schema.mingtang_names(v)) or "0"
    if col == "outcome":
        with contextlib.suppress(ValueError):
            return OutcomeKind(v).name
    return str(v)


def _illegal(state: State, seat: int, action: int) -> str:
    astr = action_label(action)
    legal = state.pending.get(seat)
    if legal is None or seat in state.declared:
        who = ", ".join(map(str, state.deciders())) or "nobody"
        return f"illegal event: seat {seat} plays {astr} but seat {who} must decide"
    opts = ", ".join(action_str(a) for a in legal)
    return f"illegal event: seat {seat} plays {astr}; legal: {opts}"


def check_log(log: HandLog, compare: bool = True) -> list[Problem]:
    """Replay ``log`` through ``State.apply_checked`` and compare it with its recorded rows
    (``log.event_rows`` / ``log.hand``, when present and ``compare``). Problems, in order;
    empty if the hand is sound."""
    run = log.run or ""
    hid = log.hand_id
    problems: list[Problem] = []

    def bad(reason: str, seq: int | None = None) -> None:
        problems.append(Problem(run, hid, seq, reason))

    why = deck_problem(log.deck)
    if why:
        bad(why)
        return problems
    n_seats = log.rules.players
    if not 0 <= log.dealer < n_seats:
        bad(f"dealer {log.dealer} is not a seat of a {n_seats}-player table")
        return problems
    try:
        state = game_for(log.rules).new_initial_state(log.deck, log.dealer)
    except (IllegalAction, InvalidNotation) as e:
        bad(str(e))
        return problems
    rows = log.event_rows if compare else {}
    recorded = None
    if rows and all(c in rows for c in DERIVED_EVENT_COLUMNS):
        recorded = list(zip(*(rows[c] for c in DERIVED_EVENT_COLUMNS)))
        if len(recorded) != len(log.events):
            recorded = None
    pending = state.pending
    for k, (seat, action) in enumerate(log.events):
        if state.outcome is not None:
            bad(f"event after the end of the hand ({len(log.events) - k} extra)", k)
            break
        pending = state.pending
        legal = pending.get(seat)
        if legal is None or seat in state.declared or action not in legal:
            bad(_illegal(state, seat, action), k)
            break
        if recorded is not None:
            exp = expected_event(state, seat, action)
            if recorded[k] != exp:
                diffs = [
                    f"{c} {_fmt(c, g)} (expected {_fmt(c, e)})"
                    for c, g, e in zip(DERIVED_EVENT_COLUMNS, recorded[k], exp, strict=True)
                    if g != e
                ]
                bad(f"event {seat}:{action_label(action)} recorded with " + ", ".join(diffs), k)
        state.apply_checked(seat, action)
    else:
        if state.outcome is None:
            who = ", ".join(map(str, state.deciders()))
            bad(f"the log ends before the hand does (seat {who} still to decide)", len(log.events))
    if problems or not compare or not log.hand or state.outcome is None:
        return problems
    exp_hand = expected_hand(state, len(log.events))
    diffs = []
    for c in OUTCOME_COLUMNS:
        if c not in log.hand:
            continue
        got = log.hand[c]
        if c == "delta_3" and n_seats == 3 and got in (None, 0):
            continue
        if got != exp_hand[c]:
            diffs.append(f"{c} {_fmt(c, got)} (recomputed {_fmt(c, exp_hand[c])})")
    if diffs:
        bad("recorded outcome differs: " + ", ".join(diffs))
    return problems


# ---------------------------------------------------------------------------------------------
# A shard
# ---------------------------------------------------------------------------------------------


@dataclass
class ShardResult:
    hands: int = 0  # hands checked
    events: int = 0
    bad: list[int] = field(default_factory=list)  # bad hand ids
    unverifiable: int = 0  # hands that could not be read at all
    problems: list[Problem] = field(default_factory=list)


def _read(path: Path, columns: list[str]) -> pa.Table:
    pf = pq.ParquetFile(path)
    names = set(pf.schema_arrow.names)
    missing = [c for c in columns if c not in names]
    if missing:
        raise KeyError(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    return pf.read(columns=columns)


def verify_shard(
    run: str,
    run_path: str,
    shard: dict[str, Any],
    rules: dict[str, Any],
    checksums: bool = True,
) -> ShardResult:
    """Check one shard (both files) of a run. Never raises on bad data."""
    res = ShardResult()
    idx = shard.get("index")
    first = int(shard.get("first_hand", 0))
    n_hands = int(shard.get("hands", 0))

    def shard_bad(reason: str, hands: int = 0) -> None:
        res.problems.append(Problem(run, None, None, reason, idx, hands))

    try:
        ruleset = RuleSet.from_dict(rules)
        files = shard["files"]
        paths = {t: resolve_shard_path(Path(run_path), files[t]["path"]) for t in schema.TABLES}
    except (PaohuziError, KeyError, TypeError) as e:
        shard_bad(f"bad shard entry in the manifest: {e}", n_hands)
        res.unverifiable = n_hands
        return res
    tables: dict[str, pa.Table] = {}
    for t, cols in (("hands", HAND_COLUMNS), ("events", EVENT_COLUMNS)):
        p = paths[t]
        entry = files[t]
        if not p.exists():
            shard_bad(f"{entry['path']} is missing", n_hands)
            res.unverifiable = n_hands
            return res
        if checksums:
            size = p.stat().st_size
            if entry.get("bytes") is not None and size != entry["bytes"]:
                shard_bad(
                    f"{entry['path']} has {size:,} bytes, the manifest says {entry['bytes']:,}"
                )
            elif entry.get("sha256") and file_sha256(p) != entry["sha256"]:
                shard_bad(f"{entry['path']} does not match its SHA-256 in the manifest")
        try:
            tables[t] = _read(p, cols)
        except (OSError, pa.ArrowException, KeyError, ValueError) as e:
            msg = " ".join(str(e).split()) or type(e).__name__
            shard_bad(f"cannot read {entry['path']}: {msg}", n_hands)
            res.unverifiable = n_hands
            return res
        if tables[t].num_rows != entry.get("rows"):
            shard_bad(
                f"{entry['path']} has {tables[t].num_rows:,} rows, the manifest says"
                f" {entry.get('rows')}"
            )
    hands_t, events_t = tables["hands"], tables["events"]
    if hands_t.num_rows != n_hands:
        shard_bad(f"{hands_t.num_rows:,} hands in the file, the manifest says {n_hands:,}")
    try:
        hands = hands_t.to_pylist()
        ev = events_t.to_pydict()
    except (pa.ArrowException, ValueError) as e:
        shard_bad(f"cannot decode the shard: {e}", n_hands)
        res.unverifiable = n_hands
        return res
    res.events = events_t.num_rows
    # Events grouped by hand id: each hand's rows must be one contiguous block.
    ids = np.asarray(events_t.column("hand_id").to_numpy(zero_copy_only=False), dtype=np.int64)
    blocks: dict[int, list[tuple[int, int]]] = {}
    if len(ids):
        cuts = np.flatnonzero(np.diff(ids)) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [len(ids)]))
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
            blocks.setdefault(int(ids[a]), []).append((a, b))
    known = set()
    for i, h in enumerate(hands):
        hid = h["hand_id"]
        known.add(hid)
        res.hands += 1
        hp: list[Problem] = []
        if hid != first + i:
            hp.append(
                Problem(
                    run,
                    hid,
                    None,
                    f"hands row {i} of shard {idx} holds hand {hid},"
                    f" expected {first + i} (rows out of order)",
                )  # fmt: skip
            )
        parts = blocks.get(hid, [])
        if len(parts) > 1:
            hp.append(Problem(run, hid, None, "events out of order: the hand's rows are split"
                              f" into {len(parts)} blocks"))  # fmt: skip
        else:
            a, b = parts[0] if parts else (0, 0)
            hev = {c: v[a:b] for c, v in ev.items()}
            seqs = hev["seq"]
            n = b - a
            if seqs != list(range(n)):
                k = next(j for j, s in enumerate(seqs) if s != j)
                hp.append(Problem(run, hid, k, f"events out of order: seq {seqs[k]} at position"
                                  f" {k}"))  # fmt: skip
            elif n != h["n_events"]:
                hp.append(Problem(run, hid, None, f"n_events is {h['n_events']} but the hand has"
                                  f" {n} event rows"))  # fmt: skip
            else:
                try:
                    log = log_from_rows(run, ruleset, h, hev)
                except (TypeError, ValueError) as e:
                    hp.append(Problem(run, hid, None, f"unreadable hand row: {e}"))
                else:
                    try:
                        hp += check_log(log)
                    except Exception as e:  # an engine failure is a finding, not a crash
                        hp.append(
                            Problem(run, hid, None, f"the engine failed: {type(e).__name__}: {e}")
                        )
        if hp:
            res.bad.append(hid)
            res.problems += hp
    stray = sorted(set(blocks) - known)
    if stray:
        shard_bad(f"events of hand{'s' if len(stray) > 1 else ''} not in this shard: "
                  + ", ".join(map(str, stray[:5])) + (" …" if len(stray) > 5 else ""))  # fmt: skip
    return res


# ---------------------------------------------------------------------------------------------
# Runs and the store
# ---------------------------------------------------------------------------------------------


@dataclass
class RunReport:
    run: str
    hands: int = 0  # hands checked
    hands_expected: int = 0  # hands the manifest lists
    events: int = 0
    bad: list[int] = field(default_factory=list)
    unverifiable: int = 0
    problems: list[Problem] = field(default_factory=list)
    status: str | None = None

    @property
    def n_bad(self) -> int:
        return len(self.bad) + self.unverifiable

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "status": self.status,
            "hands": self.hands,
            "hands_expected": self.hands_expected,
            "events": self.events,
            "bad_hands": sorted(self.bad),
            "unverifiable_hands": self.unverifiable,
            "problems": [p.to_dict() for p in self.problems],
        }


@dataclass
class VerifyReport:
    runs: list[RunReport]
    seconds: float = 0.0

    @property
    def hands(self) -> int:
        return sum(r.hands for r in self.runs)

    @property
    def events(self) -> int:
        return sum(r.events for r in self.runs)

    @property
    def n_bad(self) -> int:
        return sum(r.n_bad for r in self.runs)

    @property
    def problems(self) -> list[Problem]:
        return [p for r in self.runs for p in r.problems]

    @property
    def bad_hands(self) -> list[tuple[str, int]]:
        return [(r.run, h) for r in self.runs for h in sorted(r.bad)]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.runs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "hands": self.hands,
            "events": self.events,
            "bad_hands": self.n_bad,
            "seconds": round(self.seconds, 3),
            "runs": [r.to_dict() for r in self.runs],
        }


def _check_manifest(
    name: str, path: Path
) -> tuple[dict[str, Any] | None, list[Problem], list[dict[str, Any]]]:
    """The manifest, run-level problems, and the shard entries that can be checked."""
    problems: list[Problem] = []

    def bad(reason: str, hands: int = 0) -> None:
        problems.append(Problem(name, None, None, reason, None, hands))

    try:
        m = store.read_manifest(path)
    except PaohuziError as e:
        bad(str(e))
        return None, problems, []
    version = m.get("schema_version")
    if version != schema.SCHEMA_VERSION:
        bad(f"unknown schema version {version!r} (this reader knows {schema.SCHEMA_VERSION})")
        return None, problems, []
    if m.get("run") not in (None, name):
        bad(f"the manifest is for run {m.get('run')!r}, not {name!r}")
    try:
        RuleSet.from_dict(m["rules"])
    except (PaohuziError, KeyError, TypeError) as e:
        bad(f"bad rules in the manifest: {e}")
        return None, problems, []
    shards = m.get("shards")
    if not isinstance(shards, list):
        bad("the manifest has no shard list")
        return None, problems, []
    good = []
    expect = 0
    seen: set[int] = set()
    for s in sorted(shards, key=lambda s: (s.get("first_hand", -1), s.get("index", -1))):
        try:
            idx, fh, nh = int(s["index"]), int(s["first_hand"]), int(s["hands"])
            s["files"]["hands"]["path"], s["files"]["events"]["path"]  # noqa: B018
        except (KeyError, TypeError, ValueError) as e:
            bad(f"malformed shard entry {s!r:.60}: {e}")
            continue
        if idx in seen:
            bad(f"shard {idx} is listed twice")
            continue
        seen.add(idx)
        if fh != expect:
            problems.append(Problem(name, None, None, f"shard {idx} starts at hand {fh}, expected"
                                    f" {expect} (hands missing or overlapping)", idx))  # fmt: skip
        expect = fh + nh
        good.append(s)
    prog = m.get("progress") or {}
    total = sum(int(s["hands"]) for s in good)
    if prog.get("hands") is not None and prog.get("hands") != total:
        bad(f"the manifest's progress says {prog.get('hands')} hands, its shards hold {total}")
    listed = {
        str(s["files"][t]["path"]) for s in good for t in schema.TABLES if t in s.get("files", {})
    }
    for p in sorted(path.glob("*/*.parquet")):
        rel = p.relative_to(path).as_posix()
        if rel not in listed and m.get("status") == "complete":
            bad(f"{rel} is not listed in the manifest of a complete run")
    return m, problems, good


def _run_names(root: Path, names: Iterable[str]) -> list[str]:
    """The runs to check: the given names, else every run folder (with a manifest, or with
    shard files and no manifest, which is reported)."""
    names = list(names)
    if names:
        return names
    runs = root / "runs"
    found = []
    if runs.is_dir():
        for p in sorted(runs.iterdir()):
            if not p.is_dir() or not p.name.startswith("run="):
                continue
            name = p.name.removeprefix("run=")
            if (p / store.MANIFEST_NAME).exists():
                found.append(name)
            elif any(p.glob("*/*.parquet")):
                found.append(name)  # reported as a run without a manifest
    return found


def verify_store(
    root: Path | str,
    runs: Iterable[str] = (),
    workers: int = 1,
    checksums: bool = True,
    progress: Callable[[int, int], None] | None = None,
    min_pool_hands: int = 2000,
) -> VerifyReport:
    """Verify the given runs of the store at ``root`` (every run when none is given).

    ``workers > 1`` checks shards in a process pool, unless there are fewer than
    ``min_pool_hands`` hands (starting the pool would take longer than the work).

    A name that is not a run folder raises :class:`store.StoreError` (bad input); anything
    wrong inside a run is a :class:`Problem` in the report.
    """
    root = Path(root)
    start = time.perf_counter()
    names = _run_names(root, runs)
    reports: list[RunReport] = []
    tasks: list[tuple[RunReport, tuple[Any, ...]]] = []
    for name in names:
        path = store.run_dir(root, name)
        rep = RunReport(name)
        reports.append(rep)
        if not path.is_dir():
            known = ", ".join(_run_names(root, ())) or "none"
            raise store.StoreError(f"no run {name!r} in {root} (runs: {known})")
        if not (path / store.MANIFEST_NAME).exists():
            n = len(list(path.glob("hands/*.parquet")))
            rep.problems.append(
                Problem(
                    name,
                    None,
                    None,
                    f"no manifest.json (a run folder with {n} hands"
                    " file(s) that no manifest describes)",
                )  # fmt: skip
            )
            rep.unverifiable = 0
            continue
        m, problems, shards = _check_manifest(name, path)
        rep.problems += problems
        if m is None:
            continue
        rep.status = m.get("status")
        rep.hands_expected = sum(int(s["hands"]) for s in shards)
        for s in shards:
            tasks.append((rep, (name, str(path), s, m["rules"], checksums)))
    total = sum(int(t[1][2]["hands"]) for t in tasks)
    done = 0
    if progress is not None:
        progress(0, total)

    def collect(rep: RunReport, r: ShardResult, n: int) -> None:
        nonlocal done
        rep.hands += r.hands
        rep.events += r.events
        rep.bad += r.bad
        rep.unverifiable += r.unverifiable
        rep.problems += r.problems
        done += n
        if progress is not None:
            progress(done, total)

    if workers <= 1 or len(tasks) <= 1 or total < min_pool_hands:
        for rep, args in tasks:
            collect(rep, verify_shard(*args), int(args[2]["hands"]))
    else:
        _pool(tasks, workers, collect)
    for rep in reports:
        rep.problems.sort(key=lambda p: (p.hand is not None, p.hand or 0, p.seq or 0))
    return VerifyReport(reports, time.perf_counter() - start)


def _init_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from replay.record.runner import _die_with_parent

    _die_with_parent()


def _pool(
    tasks: list[tuple[RunReport, tuple[Any, ...]]],
    workers: int,
    collect: Callable[[RunReport, ShardResult, int], None],
) -> None:
    ctx = mp.get_context("spawn")
    ex = ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)), mp_context=ctx, initializer=_init_worker
    )
    pending: dict[Future[ShardResult], tuple[RunReport, int]] = {}
    try:
        for rep, args in tasks:
            pending[ex.submit(verify_shard, *args)] = (rep, int(args[2]["hands"]))
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                rep, n = pending.pop(f)
                collect(rep, f.result(), n)
    finally:
        for f in pending:
            f.cancel()
        ex.shutdown(wait=True, cancel_futures=True)


def action_label(code: int) -> str:
    """An action code as text, or the bare code if it is not one (for messages)."""
    try:
        return action_str(code)
    except (InvalidNotation, ValueError, IndexError):
        return f"code {code}"
