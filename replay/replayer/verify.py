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
* **shard**: both files are readable Parquet with the columns of :mod:`replay.schema`, the
  row counts the manifest gives, hand ids ``first_hand …`` in order, events grouped by hand;
  a summary file it lists holds exactly what its hands give (recomputed and compared);
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
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.actions import CHI_BASE, action_str, kind_of
from engine.cards import COPIES, DECK_SIZE, NUM_KINDS, card_char
from engine.errors import IllegalAction, InvalidNotation, PaohuziError, did_you_mean
from engine.rules import RuleSet
from engine.state import OutcomeKind, State
from replay import schema, store
from replay.pool import process_pool, start_method
from replay.replayer.hand import HandLog, game_for, log_from_rows
from replay.store.check import error_text, file_problems
from replay.store.scan import Uncached, resolve_shard_path, run_folder_problem

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


def _illegal(state: Any, seat: int, action: int) -> str:
    astr = action_label(action)
    legal = state.pending.get(seat)
    if legal is None or seat in state.declared:
        who = ", ".join(map(str, state.deciders())) or "nobody"
        return f"illegal event: seat {seat} plays {astr} but seat {who} must decide"
    opts = ", ".join(action_str(a) for a in legal)
    return f"illegal event: seat {seat} plays {astr}; legal: {opts}"


class FastState:
    """The compiled state machine (:mod:`engine.fast.state`) behind the few ``State``
    attributes :func:`check_log` reads, so one check (and one set of messages) serves both
    engines. Its columns come from the compiled derivation the fast recorder itself uses
    (``engine.fast.play.event_fields`` / ``outcome_fields``)."""

    def __init__(self, rules: RuleSet, deck: Sequence[int], dealer: int) -> None:
        from engine.fast import state as S
        from engine.fast.rule_arrays import rule_arrays

        self.S = S
        self.rules = rules
        self.n_seats = rules.players
        self.rp, self.hp = rule_arrays(rules)
        self.st = np.zeros(S.STATE_SIZE, dtype=np.int32)
        S.new_state(self.rp, self.hp, np.asarray(deck, dtype=np.int64), int(dealer), self.st)

    @property
    def outcome(self) -> int | None:
        k = int(self.st[self.S.OUT_KIND])
        return None if k < 0 else k

    @property
    def pending(self) -> dict[int, tuple[int, ...]]:
        S, st = self.S, self.st
        out = {}
        for i in range(int(st[S.PEND_NS])):
            seat = int(st[S.PEND_SEATS + i])
            b = S.PEND_A + seat * S.MAXA
            out[seat] = tuple(int(a) for a in st[b : b + st[S.PEND_N + seat]])
        return out

    @property
    def declared(self) -> set[int]:
        return {s for s in range(4) if self.st[self.S.DECL + s] >= 0}

    def deciders(self) -> tuple[int, ...]:
        declared = self.declared
        return tuple(s for s in self.pending if s not in declared)

    def apply_checked(self, seat: int, action: int) -> None:
        if not self.S.apply_checked(self.rp, self.hp, self.st, int(seat), int(action)):
            raise IllegalAction(f"seat {seat} plays {action_label(action)}: not legal")

    def expected_event(self, seat: int, action: int) -> tuple[Any, ...]:
        from engine.fast.play import NULL8, event_fields

        kind, card, frm, forced, nl, opts = event_fields(self.st, int(seat), int(action))
        return (
            int(kind),
            None if card == NULL8 else int(card),
            None if frm == NULL8 else int(frm),
            bool(forced),
            int(nl),
            int(opts),
        )

    def expected_hand(self, n_events: int) -> dict[str, Any]:
        from engine.fast.verify import NULL, OUTCOME_CHECKED, expected_outcome

        x = np.zeros(len(OUTCOME_CHECKED), dtype=np.int64)
        expected_outcome(self.st, self.n_seats, n_events, np.zeros(16, dtype=np.int64), x)
        row = {c: None if v == NULL else int(v) for c, v in zip(OUTCOME_CHECKED, x.tolist())}
        if row["zimo"] is not None:
            row["zimo"] = bool(row["zimo"])
        return row


ENGINES = ("fast", "reference")


def fast_unsupported(rules: RuleSet) -> str | None:
    """Why the compiled engine cannot re-apply hands of ``rules`` (None if it can)."""
    try:
        from engine.fast.rule_arrays import rule_arrays

        rule_arrays(rules)
    except Exception as e:  # a rule set the compiled tables do not cover
        return f"{type(e).__name__}: {e}"
    return None


def check_log(log: HandLog, compare: bool = True, engine: str = "reference") -> list[Problem]:
    """Replay ``log`` through the checked path of ``engine`` (``"reference"``:
    ``State.apply_checked``; ``"fast"``: the compiled state machine, :class:`FastState`) and
    compare it with its recorded rows (``log.event_rows`` / ``log.hand``, when present and
    ``compare``). Problems, in order; empty if the hand is sound."""
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
    state: Any
    try:
        if engine == "fast":
            state = FastState(log.rules, log.deck, log.dealer)
        else:
            state = game_for(log.rules).new_initial_state(log.deck, log.dealer)
    except (IllegalAction, InvalidNotation) as e:
        bad(str(e))
        return problems
    if engine == "fast":
        exp_event: Callable[[int, int], tuple[Any, ...]] = state.expected_event
        exp_hand: Callable[[int], dict[str, Any]] = state.expected_hand
    else:
        exp_event = lambda seat, action: expected_event(state, seat, action)  # noqa: E731
        exp_hand = lambda n: expected_hand(state, n)  # noqa: E731
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
            exp = exp_event(seat, action)
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
    expected = exp_hand(len(log.events))
    diffs = []
    for c in OUTCOME_COLUMNS:
        if c not in log.hand:
            continue
        got = log.hand[c]
        if c == "delta_3" and n_seats == 3 and got in (None, 0):
            continue
        if got != expected[c]:
            diffs.append(f"{c} {_fmt(c, got)} (recomputed {_fmt(c, expected[c])})")
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


@dataclass
class _Shard:
    """One shard being verified: what it is and what was found so far."""

    run: str
    run_path: Path
    entry: dict[str, Any]
    checksums: bool
    index: Any
    first_hand: int
    n_hands: int
    res: ShardResult = field(default_factory=ShardResult)

    def bad(self, reason: str, hands: int = 0) -> None:
        """A problem of the shard as a whole (no hand), making ``hands`` unverifiable."""
        self.res.problems.append(Problem(self.run, None, None, reason, self.index, hands))

    def give_up(self, reason: str) -> ShardResult:
        """A problem that leaves every hand of the shard unverifiable; the result."""
        self.bad(reason, self.n_hands)
        self.res.unverifiable = self.n_hands
        return self.res


def verify_shard(
    run: str,
    run_path: str,
    shard: dict[str, Any],
    rules: dict[str, Any],
    checksums: bool = True,
    engine: str = "reference",
    shape: dict[str, Any] | None = None,
) -> ShardResult:
    """Check one shard (both files) of a run. Never raises on bad data. The file-level
    checks are the same for both engines; ``engine`` (``"fast"`` / ``"reference"``) says
    which one re-applies the hands. With ``shape`` (the manifest's ``rules`` and
    ``params``) the summary and facts files the shard lists are recomputed from its hands
    and events and compared, and its provenance file checked
    (:mod:`replay.replayer.verify_summary`, :mod:`replay.replayer.verify_listed`)."""
    sh = _Shard(
        run,
        Path(run_path),
        shard,
        checksums,
        index=shard.get("index"),
        first_hand=int(shard.get("first_hand", 0)),
        n_hands=int(shard.get("hands", 0)),
    )
    try:
        ruleset = RuleSet.from_dict(rules)
        files = shard["files"]
        paths = {t: resolve_shard_path(sh.run_path, files[t]["path"]) for t in schema.TABLES}
    except (PaohuziError, KeyError, TypeError) as e:
        return sh.give_up(f"bad shard entry in the manifest: {e}")
    tables = _read_tables(sh, files, paths)
    if tables is None:
        return sh.res
    hands_t, events_t = tables
    if hands_t.num_rows != sh.n_hands:
        sh.bad(f"{hands_t.num_rows:,} hands in the file, the manifest says {sh.n_hands:,}")
    if shape is not None:  # derived data checked against its source (LOG_FORMAT §10)
        _check_derived(sh, shape, paths)
    try:
        hand_ids = hands_t.column("hand_id").to_pylist()
        n_events = hands_t.column("n_events").to_pylist()
        ids = np.asarray(events_t.column("hand_id").to_numpy(zero_copy_only=False), np.int64)
        seq = np.asarray(events_t.column("seq").to_numpy(zero_copy_only=False), np.int64)
        check = _ReferenceCheck(run, ruleset, hands_t, events_t) if engine != "fast" else (
            _FastCheck(run, ruleset, hands_t, events_t))  # fmt: skip
    except (pa.ArrowException, ValueError, TypeError) as e:
        return sh.give_up(f"cannot decode the shard: {e}")
    sh.res.events = events_t.num_rows
    blocks = _in_order(ids, seq, hand_ids, n_events, sh.first_hand)
    if blocks is not None:  # the usual shard: every hand's events one block, in order
        _check_in_order(sh, check, hand_ids, blocks, ruleset, tables, shape)
    else:
        _check_out_of_order(sh, check, hand_ids, n_events, ids, seq, events_t)
    return sh.res


#: What a table file's check says about its content, said after what it says about the file
#: against its listing (there, a regular file, its size, its SHA-256).
_CONTENT = ("corrupt", "rows")


def _read_tables(
    sh: _Shard, files: dict[str, Any], paths: dict[str, Path]
) -> tuple[pa.Table, pa.Table] | None:
    """The shard's ``hands`` and ``events`` tables, each file first checked against its
    manifest entry by the store's one check (:func:`replay.store.check.file_problems`, no
    cache: every byte read); None when one cannot be read (every hand then unverifiable)."""
    tables = []
    for t, columns in (("hands", HAND_COLUMNS), ("events", EVENT_COLUMNS)):
        entry, rel = files[t], files[t]["path"]
        problems = file_problems(paths[t], entry, Uncached(), checksums=sh.checksums)
        listing = [p for p in problems if p.kind not in _CONTENT]
        for p in [*listing, *(p for p in problems if p.kind in _CONTENT and p.fatal)]:
            sh.bad(p.reason(rel), sh.n_hands if p.fatal else 0)
        if any(p.fatal for p in problems):
            sh.res.unverifiable = sh.n_hands
            return None
        try:
            tables.append(_read(paths[t], columns))
        except (OSError, pa.ArrowException, KeyError, ValueError) as e:
            sh.give_up(f"cannot read {rel}: {error_text(e)}")
            return None
        for p in problems:  # its row count, said of a file that reads
            if p.kind in _CONTENT:
                sh.bad(p.reason(rel))
    return tables[0], tables[1]


def _check_derived(sh: _Shard, shape: dict[str, Any], paths: dict[str, Path]) -> None:
    """The summary and provenance files the shard lists, against its tables."""
    from replay.replayer.verify_listed import provenance_problem
    from replay.replayer.verify_summary import summary_problem

    for derived in (
        summary_problem(
            sh.run_path, sh.entry, shape, paths["hands"], paths["events"], sh.checksums
        ),
        provenance_problem(sh.run_path, sh.entry, sh.checksums),
    ):
        if derived is not None:
            sh.bad(derived)


def _check_in_order(
    sh: _Shard,
    check: _ReferenceCheck | _FastCheck,
    hand_ids: list[int],
    blocks: tuple[np.ndarray, np.ndarray],
    ruleset: RuleSet,
    tables: tuple[pa.Table, pa.Table],
    shape: dict[str, Any] | None,
) -> None:
    """Re-apply every hand of a shard laid out as it is written (``blocks``: each hand's
    first event row and end, :func:`_in_order`); with ``shape``, compare its facts file
    with the facts the hands give."""
    from engine.fast.facts import ROW_SIZE

    res = sh.res
    res.hands = len(hand_ids)
    # the compiled check counts the facts as it re-applies the hands (no second replay)
    facts = np.zeros((len(hand_ids), ROW_SIZE), np.int64) if shape is not None else None
    found_all = check.check(np.arange(len(hand_ids), dtype=np.int64), *blocks, facts=facts)
    for i in sorted(found_all):
        res.bad.append(hand_ids[i])
        res.problems += found_all[i]
    if shape is not None:  # a shard out of order is not checked further
        from replay.replayer.verify_listed import facts_problem

        rows = facts if isinstance(check, _FastCheck) else None
        derived = facts_problem(sh.run_path, sh.entry, ruleset, *tables, sh.checksums, rows)
        if derived is not None:
            sh.bad(derived)


def _event_blocks(ids: np.ndarray, seq: np.ndarray) -> dict[int, list[tuple[int, int, int]]]:
    """The events' rows grouped by hand id: each hand's ``(first row, end, bad_seq)`` per
    contiguous block of its rows (one, when in order), ``bad_seq`` the first position in the
    block whose seq is not 0, 1, 2 … there, else -1."""
    blocks: dict[int, list[tuple[int, int, int]]] = {}
    if len(ids):
        cuts = np.flatnonzero(np.diff(ids)) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [len(ids)]))
        rel = np.arange(len(ids)) - np.repeat(starts, ends - starts)
        wrong = np.flatnonzero(seq != rel)
        first_wrong = np.full(len(starts), -1, dtype=np.int64)
        if len(wrong):
            blk = np.searchsorted(starts, wrong, side="right") - 1
            first = np.unique(blk, return_index=True)
            first_wrong[first[0]] = rel[wrong[first[1]]]
        for a, b, w in zip(starts.tolist(), ends.tolist(), first_wrong.tolist(), strict=True):
            blocks.setdefault(int(ids[a]), []).append((a, b, w))
    return blocks


def _check_out_of_order(
    sh: _Shard,
    check: _ReferenceCheck | _FastCheck,
    hand_ids: list[int],
    n_events: list[int],
    ids: np.ndarray,
    seq: np.ndarray,
    events_t: pa.Table,
) -> None:
    """A shard not laid out as written: each hand's rows named where out of place, the
    hands whose events are one block in seq order re-applied, and events of hands the
    shard does not hold named."""
    res, run, first_hand, idx = sh.res, sh.run, sh.first_hand, sh.index
    blocks = _event_blocks(ids, seq)
    known = set()
    per_hand: list[tuple[int, list[Problem]]] = []
    todo: list[tuple[int, int, int]] = []  # (row, first event row, end) to re-apply
    for i, hid in enumerate(hand_ids):
        known.add(hid)
        res.hands += 1
        hp: list[Problem] = []
        per_hand.append((hid, hp))
        if hid != first_hand + i:
            hp.append(
                Problem(
                    run,
                    hid,
                    None,
                    f"hands row {i} of shard {idx} holds hand {hid},"
                    f" expected {first_hand + i} (rows out of order)",
                )  # fmt: skip
            )
        parts = blocks.get(hid, [])
        if len(parts) > 1:
            hp.append(Problem(run, hid, None, "events out of order: the hand's rows are split"
                              f" into {len(parts)} blocks"))  # fmt: skip
            continue
        a, b, w = parts[0] if parts else (0, 0, -1)
        n = b - a
        if w >= 0:
            s_k = events_t.column("seq")[a + w].as_py()
            hp.append(Problem(run, hid, w, f"events out of order: seq {s_k} at position {w}"))
        elif n != n_events[i]:
            hp.append(Problem(run, hid, None, f"n_events is {n_events[i]} but the hand has"
                              f" {n} event rows"))  # fmt: skip
        else:
            todo.append((i, a, b))
    found = check.check(*(np.array([t[j] for t in todo], dtype=np.int64) for j in range(3)))
    for i, _a, _b in todo:
        per_hand[i][1].extend(found.get(i, ()))
    for hid, hp in per_hand:
        if hp:
            res.bad.append(hid)
            res.problems += hp
    stray = sorted(set(blocks) - known)
    if stray:
        sh.bad(f"events of hand{'s' if len(stray) > 1 else ''} not in this shard: "
               + ", ".join(map(str, stray[:5])) + (" …" if len(stray) > 5 else ""))  # fmt: skip


def check_tables(
    run: str, ruleset: RuleSet, hands_t: pa.Table, events_t: pa.Table
) -> dict[int, list[Problem]]:
    """Re-apply the hands of a shard about to be written (``hands_t`` and ``events_t`` as
    :func:`verify_shard` reads them back: hands in id order, each hand's events one block):
    the check ``paohuzi verify`` makes of every stored shard, through the compiled kernel
    when it covers ``ruleset`` (else the reference engine). The problems, by hands row;
    rows not laid out as a shard is written are each one problem."""
    hand_ids = hands_t.column("hand_id").to_pylist()
    n_events = hands_t.column("n_events").to_pylist()
    ids = np.asarray(events_t.column("hand_id").to_numpy(zero_copy_only=False), np.int64)
    seq = np.asarray(events_t.column("seq").to_numpy(zero_copy_only=False), np.int64)
    blocks = _in_order(ids, seq, hand_ids, n_events, hand_ids[0] if hand_ids else 0)
    if blocks is None:
        return {
            i: [Problem(run, hid, None, "the shard's rows are not in hand order")]
            for i, hid in enumerate(hand_ids)
        }
    fast = fast_unsupported(ruleset) is None
    check = (_FastCheck if fast else _ReferenceCheck)(run, ruleset, hands_t, events_t)
    return check.check(np.arange(len(hand_ids), dtype=np.int64), *blocks)


def _in_order(
    ids: np.ndarray, seq: np.ndarray, hand_ids: list[int], n_events: list[int], first: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(first event row, end) of each hand when the shard is laid out as written: hands
    ``first, first + 1, …`` in order, each hand's events one block (none for a hand without
    decisions) in the same order, with seq 0, 1, 2 … and as many rows as its ``n_events``;
    None otherwise (then the general path names what is out of place)."""
    n = len(hand_ids)
    hid = np.asarray(hand_ids, dtype=np.int64)
    ne = np.asarray(n_events, dtype=np.int64)
    if n == 0 or not (hid == first + np.arange(n)).all() or (ne < 0).any():
        return None
    ends = np.cumsum(ne)
    starts = ends - ne
    if int(ends[-1]) != len(ids) or not (ids == np.repeat(hid, ne)).all():
        return None
    if not (seq == np.arange(len(ids)) - np.repeat(starts, ne)).all():
        return None
    return starts, ends


def _check_hand(
    run: str, ruleset: RuleSet, hid: Any, h: dict[str, Any], hev: dict[str, list[Any]], engine: str
) -> list[Problem]:
    """The per-hand re-application of one hand: its row and events through check_log."""
    try:
        log = log_from_rows(run, ruleset, h, hev)
    except (TypeError, ValueError) as e:
        return [Problem(run, hid, None, f"unreadable hand row: {e}")]
    try:
        return check_log(log, engine=engine)
    except Exception as e:  # an engine failure is a finding, not a crash
        return [Problem(run, hid, None, f"the engine failed: {type(e).__name__}: {e}")]


class _ReferenceCheck:
    """Re-apply hands through the reference engine, one HandLog at a time."""

    def __init__(self, run: str, ruleset: RuleSet, hands_t: pa.Table, events_t: pa.Table):
        self.run, self.ruleset = run, ruleset
        self.hands = hands_t.to_pylist()
        self.ev = events_t.to_pydict()

    def check(
        self,
        rows: np.ndarray,
        los: np.ndarray,
        his: np.ndarray,
        facts: np.ndarray | None = None,
    ) -> dict[int, list[Problem]]:
        """Re-apply hands ``rows`` (their events are rows ``los[j] … his[j] - 1``); the
        problems found, by hands row."""
        out = {}
        for i, a, b in zip(rows.tolist(), los.tolist(), his.tolist(), strict=True):
            h = self.hands[i]
            hev = {c: v[a:b] for c, v in self.ev.items()}
            found = _check_hand(self.run, self.ruleset, h["hand_id"], h, hev, "reference")
            if found:
                out[i] = found
        return out


def _ints(col: pa.ChunkedArray | pa.Array, null: int) -> np.ndarray:
    """An integer (or bool) column as int64, nulls as ``null``."""
    import pyarrow.compute as pc

    if col.null_count == 0:
        return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.int64)
    return np.asarray(
        pc.fill_null(col.cast(pa.int64()), null).to_numpy(zero_copy_only=False), np.int64
    )


class _FastCheck:
    """Re-apply hands through the compiled engine: one kernel call over every hand of the
    shard (engine.fast.verify.verify_kernel); the few hands it flags are re-checked one by one
    through :func:`check_log` on :class:`FastState`, which writes the messages."""

    def __init__(self, run: str, ruleset: RuleSet, hands_t: pa.Table, events_t: pa.Table):
        from engine.fast.verify import NULL, OUTCOME_CHECKED

        self.run, self.ruleset = run, ruleset
        self.hands_t, self.events_t = hands_t, events_t
        self.dealers = _ints(hands_t.column("dealer"), -1)
        self.rec = np.stack([_ints(hands_t.column(c), NULL) for c in OUTCOME_CHECKED], axis=1)
        self.seat = _ints(events_t.column("seat"), -1)
        self.action = _ints(events_t.column("action"), -1)
        self.cols = np.stack([_ints(events_t.column(c), NULL) for c in DERIVED_EVENT_COLUMNS])
        deck = hands_t.column("deck").combine_chunks()
        n = len(deck)
        decks = np.full((n, DECK_SIZE), 255, dtype=np.uint8)
        if deck.type == pa.binary(DECK_SIZE) and n:
            raw = np.frombuffer(deck.buffers()[1], dtype=np.uint8)
            decks[:] = raw[deck.offset * DECK_SIZE : (deck.offset + n) * DECK_SIZE].reshape(
                n, DECK_SIZE
            )
            if deck.null_count:
                decks[np.asarray(deck.is_null())] = 255
        self.decks = decks

    def check(
        self,
        rows: np.ndarray,
        los: np.ndarray,
        his: np.ndarray,
        facts: np.ndarray | None = None,
    ) -> dict[int, list[Problem]]:
        """As :meth:`_ReferenceCheck.check`, in one kernel call."""
        from engine.fast.verify import STATUS_NAMES, run_kernel

        if not len(rows):
            return {}
        status, seqs, _reason = run_kernel(
            self.ruleset, self.decks[rows], self.dealers[rows], los, his, self.seat,
            self.action, self.cols, self.rec[rows], facts,
        )  # fmt: skip
        out = {}
        for j in np.flatnonzero(status).tolist():
            i, a, b = int(rows[j]), int(los[j]), int(his[j])
            h = self.hands_t.slice(i, 1).to_pylist()[0]
            hev = self.events_t.slice(a, b - a).to_pydict()
            found = _check_hand(self.run, self.ruleset, h["hand_id"], h, hev, "fast")
            if not found:  # the kernel and the one-by-one check disagree: say so
                at = int(seqs[j])
                found = [
                    Problem(
                        self.run,
                        h["hand_id"],
                        at if at >= 0 else None,
                        f"the fast verifier's kernel flagged this hand"
                        f" ({STATUS_NAMES[status[j]]}) but its re-check found nothing",
                    )  # fmt: skip
                ]
            out[i] = found
        return out


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
    engine: str | None = None  # who re-applied the hands ("fast" / "reference")
    notes: list[str] = field(default_factory=list)  # said, not problems
    #: Said only when asked (``paohuzi verify -v``): the store's own housekeeping, which
    #: nobody has to act on (an earlier rollup kept for its grace period).
    details: list[str] = field(default_factory=list)

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
            "engine": self.engine,
            "hands": self.hands,
            "hands_expected": self.hands_expected,
            "events": self.events,
            "bad_hands": sorted(self.bad),
            "unverifiable_hands": self.unverifiable,
            "problems": [p.to_dict() for p in self.problems],
            "notes": list(self.notes),
            "details": list(self.details),
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
    name: str, path: Path, notes: list[str], details: list[str] | None = None
) -> tuple[dict[str, Any] | None, list[Problem], list[dict[str, Any]]]:
    """The manifest, run-level problems, and the shard entries that can be checked; what
    is worth saying but no problem goes to ``notes``, what nobody has to act on (the
    store's housekeeping) to ``details``."""
    details = notes if details is None else details
    problems: list[Problem] = []

    def bad(reason: str, hands: int = 0) -> None:
        problems.append(Problem(name, None, None, reason, None, hands))

    folder = run_folder_problem(path)
    if folder is not None:
        bad(folder)
        return None, problems, []
    try:  # the one reader: schema version, rules and every shard entry's types checked
        m = store.read_manifest(path)
    except PaohuziError as e:
        bad(str(e))
        return None, problems, []
    if m["run"] != name:
        bad(f"the manifest is for run {m['run']!r}, not {name!r}")
    good = []
    expect = 0
    seen: set[int] = set()
    for s in sorted(m["shards"], key=lambda s: (s["first_hand"], s["index"])):
        idx, fh, nh = s["index"], s["first_hand"], s["hands"]
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
    total = sum(s["hands"] for s in good)
    if prog.get("hands") is not None and prog.get("hands") != total:
        bad(f"the manifest's progress says {prog.get('hands')} hands, its shards hold {total}")
    listed = {  # the tables and any optional file a shard lists (its summary, LOG_FORMAT §10)
        str(f["path"])
        for s in good
        for f in s["files"].values()
        if isinstance(f, dict) and "path" in f
    }
    from replay.store import reviews
    from replay.store.scan import ChecksumCache

    listed |= reviews.listed_paths(m)  # stored reviews (LOG_FORMAT §11)
    from replay.replayer.verify_rollup import rollup_problem
    from replay.store.rollup import ROLLUP_DIR, ROLLUP_KEY

    roll = m.get(ROLLUP_KEY)
    if isinstance(roll, dict) and isinstance(roll.get("path"), str):
        listed.add(roll["path"])  # the run's rollup (LOG_FORMAT §13)
    why, note = rollup_problem(path, m, True)
    if why is not None:
        bad(why)
    if note is not None:
        notes.append(note)
    cache = ChecksumCache(path.parent.parent)
    for line in reviews.verify_reviews(path, m, cache):
        bad(line)
    cache.save()
    from replay.store.comparisons import check_comparisons

    for line in check_comparisons(m):  # played hands' comparisons (LOG_FORMAT §15)
        bad(line)
    # A run of imported hands is complete between imports: the files of the shard an import
    # was writing when it died lie unlisted in the next shard's slot, which the next import
    # rewrites (atomically, the same way); they are not part of the run.
    from replay.store.facts_schema import FACTS_TABLE
    from replay.store.manifest import Manifest
    from replay.store.provenance_schema import PROVENANCE
    from replay.store.summary_schema import SUMMARY_TABLE

    nxt = max((s["index"] for s in good), default=-1) + 1
    pending = (
        {store.shard_file(t, nxt) for t in (*schema.TABLES, PROVENANCE, SUMMARY_TABLE, FACTS_TABLE)}
        if Manifest(m).imported
        else set()
    )
    for p in sorted(path.glob("*/*.parquet")):
        rel = p.relative_to(path).as_posix()
        if rel in listed or m.get("status") != "complete":
            continue
        if rel.startswith(f"{ROLLUP_DIR}/"):
            details.append(
                f"run {name}: {rel} is an earlier rollup, kept for readers of an earlier"
                " manifest ($PAOHUZI_ROLLUP_GRACE seconds, default 600, after it was replaced;"
                " the run's next write or 'paohuzi index' after that removes it)"
            )
        elif rel in pending:
            notes.append(
                f"run {name}: {rel} is the file of an import interrupted before the manifest"
                " listed it (not part of the run; the next import rewrites it)"
            )
        else:
            bad(f"{rel} is not listed in the manifest of a complete run")
    return m, problems, good


def _first_write_note(name: str, path: Path) -> str | None:
    """The note on a run folder with no manifest that holds nothing of the store's but a
    first write (:func:`~replay.store.manifest.first_write`): one in progress (its lock
    held) or one interrupted (an import killed before the run's first manifest: nothing
    committed, the next writer into the run clears it); None for a folder holding other
    shard files (a run whose manifest is gone: a problem)."""
    from replay.store.manifest import first_write, lock_held

    try:
        found = first_write(path)
    except OSError:  # a folder it cannot read: the problem says what it holds
        return None
    if not found.interrupted:
        return None
    n = len(found.files)
    if lock_held(path):
        return f"run {name}: no manifest.json yet: its first write is in progress ({n} file(s))"
    return (
        f"run {name}: no manifest.json: a first write interrupted before it listed anything"
        f" ({n} file(s), nothing committed; the next simulate or import into {name} clears"
        " them)"
    )


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
    engine: str = "fast",
) -> VerifyReport:
    """Verify the given runs of the store at ``root`` (every run when none is given).

    ``engine="fast"`` re-applies hands through the compiled engine (a run whose rules it
    does not cover falls back to the reference); ``"reference"`` through the Python engine,
    the independent slow path. Both give the same report on the same store.

    ``workers > 1`` checks shards in a process pool, unless there are fewer than
    ``min_pool_hands`` hands (starting the pool would take longer than the work).

    A name that is not a run folder raises :class:`store.StoreError` (bad input); anything
    wrong inside a run is a :class:`Problem` in the report.
    """
    if engine not in ENGINES:
        raise PaohuziError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    root = Path(root)
    start = time.perf_counter()
    names = _run_names(root, runs)
    reports: list[RunReport] = []
    tasks: list[tuple[RunReport, tuple[Any, ...]]] = []
    for name in names:
        path = store.run_dir(root, name)
        rep = RunReport(name)
        reports.append(rep)
        if not os.path.isdir(path):  # False for a name too long for the system too
            names = _run_names(root, ())
            known = ", ".join(names) or "none"
            raise store.StoreError(
                f"no run {name!r} in {root} (runs: {known}){did_you_mean(name, names)}"
            )
        if not (path / store.MANIFEST_NAME).exists():
            note = _first_write_note(name, path)
            if note is not None:  # nothing was committed: no run yet, nothing damaged
                rep.status = "no manifest"
                rep.notes.append(note)
                continue
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
        m, problems, shards = _check_manifest(name, path, rep.notes, rep.details)
        rep.problems += problems
        if m is None:
            continue
        rep.status = m.get("status")
        rep.hands_expected = sum(int(s["hands"]) for s in shards)
        rep.engine = engine
        if engine == "fast" and fast_unsupported(RuleSet.from_dict(m["rules"])) is not None:
            rep.engine = "reference"
        shape = {"rules": m["rules"], "params": m.get("params") or {}}
        for s in shards:
            tasks.append((rep, (name, str(path), s, m["rules"], checksums, rep.engine, shape)))
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

    warm = any(args[5] == "fast" for _, args in tasks)
    if workers <= 1 or len(tasks) <= 1 or total < min_pool_hands:
        if warm:
            _warm_fast()
        for rep, args in tasks:
            collect(rep, verify_shard(*args), int(args[2]["hands"]))
    else:
        _pool(tasks, workers, collect, warm)
    for rep in reports:
        rep.problems.sort(key=lambda p: (p.hand is not None, p.hand or 0, p.seq or 0))
    return VerifyReport(reports, time.perf_counter() - start)


def _warm_fast() -> None:
    """Compile (or load) the verifier's kernels in this process before its first shard (under
    the compile lock, so processes starting together compile them once)."""
    from engine.fast.cache import compile_lock
    from engine.fast.verify import verify_kernel
    from engine.fast.warmup import warm_verify

    with compile_lock([verify_kernel]):
        warm_verify()


def _init_worker(warm: bool) -> None:
    if warm:
        _warm_fast()


def pool_start_method() -> str:
    """How the pool's workers start: ``fork`` from this process, already warm (its kernels
    loaded: a worker is ready in milliseconds, not the 2 s that a spawned one takes to import
    and load them), when that is safe (``replay.pool.start_method``: no other thread runs);
    else ``spawn``. The report does not depend on it."""
    return start_method(fork=True)


def _worker_died() -> PaohuziError:
    return PaohuziError(
        "a verify worker process died (killed, or out of memory); nothing was written:"
        " run 'paohuzi verify' again"
    )


def _pool(
    tasks: list[tuple[RunReport, tuple[Any, ...]]],
    workers: int,
    collect: Callable[[RunReport, ShardResult, int], None],
    warm: bool,
) -> None:
    method = pool_start_method()
    if warm and method == "fork":
        _warm_fast()  # here, once: the forked workers inherit the loaded kernels
    spawned_warm = (warm and method == "spawn",)  # spawned workers warm up side by side
    size = min(workers, len(tasks))
    # terminate=False: as before, an interrupted verify lets the running shards finish.
    with process_pool(
        size, method, _init_worker, spawned_warm, terminate=False, broken=_worker_died
    ) as ex:
        pending: dict[Future[ShardResult], tuple[RunReport, int]] = {}
        for rep, args in tasks:
            pending[ex.submit(verify_shard, *args)] = (rep, int(args[2]["hands"]))
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                rep, n = pending.pop(f)
                collect(rep, f.result(), n)


def action_label(code: int) -> str:
    """An action code as text, or the bare code if it is not one (for messages)."""
    try:
        return action_str(code)
    except (InvalidNotation, ValueError, IndexError):
        return f"code {code}"
