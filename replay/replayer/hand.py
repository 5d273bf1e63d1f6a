"""The replayer: load one recorded hand and rebuild the engine ``State`` at any step.

A hand's log is self-sufficient (docs/LOG_FORMAT.md): the rules (from the run's manifest),
the 80-card deck, the dealer and the decisions ``(seat, action)`` in order. Step ``k`` is
the state after the first ``k`` decisions, so step 0 is the state right after the deal
(before any 提, 天胡 or discard) and step ``n_steps`` is the end of the hand. Every
decision goes through the engine's checked path (``State.apply_checked``): a log that
breaks a rule raises :class:`~engine.errors.IllegalAction` naming the run, hand and seq.
No random number generator and no policy is involved.

>>> from engine.deck import shuffle_deck
>>> from engine.rules import find_rules
>>> from engine.state import State
>>> rules, deck = find_rules("hunan"), shuffle_deck(5)
>>> final = State.rebuild(rules, deck, 0, [])
>>> while not final.is_terminal():
...     seat = final.deciders()[0]
...     final.apply(seat, final.legal_actions(seat)[0])
>>> log = HandLog.from_history(rules, deck, 0, final.history)
>>> replay_hand(log) == final
True
>>> replay_hand(log, step=0) == State.rebuild(rules, deck, 0)
True
>>> d = decision_at(log, 0)
>>> (d.seat, d.chosen_str in d.legal_str, d.step)
(0, True, 0)

With a store: ``load_hand("data", "my-run", 17)`` (or an open :class:`~replay.store.Store`).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from engine.actions import action_str
from engine.errors import CorruptLog, IllegalAction, PaohuziError
from engine.rules import RuleSet
from engine.state import Game, State
from replay import schema
from replay.store.layout import StoreError
from replay.store.manifest import Manifest
from replay.store.runs import Run, Store, open_store

__all__ = [
    "HandLog",
    "Decision",
    "Replayer",
    "StepOutOfRange",
    "UnknownHand",
    "load_hand",
    "load_run",
    "replayer_at",
    "replay_hand",
    "decision_at",
    "list_runs",
    "list_hands",
    "read_hand_fast",
]


class StepOutOfRange(PaohuziError):
    """A step outside ``0 … n_steps`` of a hand."""


class UnknownHand(PaohuziError):
    """A hand id that the run does not hold."""


# ---------------------------------------------------------------------------------------------
# The log of one hand
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HandLog:
    """Everything a replay needs, and the recorded row to check it against.

    * ``rules``, ``deck`` (80 kinds, position 0 first), ``dealer``;
    * ``events``: the decisions ``(seat, action)`` in seq order;
    * ``hand``: the recorded ``hands`` row (``{}`` for a hand written by a person);
    * ``event_rows``: the recorded ``events`` columns (lists, seq order), if any;
    * ``run``, ``hand_id``: where it comes from (``None`` for a file); ``meta``: free text of
      a replay file (title, players, note, …).
    """

    rules: RuleSet
    deck: tuple[int, ...]
    dealer: int
    events: tuple[tuple[int, int], ...]
    hand: dict[str, Any] = field(default_factory=dict)
    event_rows: dict[str, list[Any]] = field(default_factory=dict, repr=False)
    run: str | None = None
    hand_id: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_history(
        cls,
        rules: RuleSet,
        deck: Sequence[int],
        dealer: int,
        history: Sequence[tuple[int, int]],
        **kw: Any,
    ) -> HandLog:
        return cls(
            rules,
            tuple(int(k) for k in deck),
            int(dealer),
            tuple((int(s), int(a)) for s, a in history),
            **kw,
        )

    @property
    def n_steps(self) -> int:
        return len(self.events)

    @property
    def where(self) -> str:
        """``run R hand H`` (or ``replay file`` for a hand without a run)."""
        if self.run is None and self.hand_id is None:
            return str(self.meta.get("source", "hand"))
        return f"run {self.run} hand {self.hand_id}"

    def check_step(self, step: int | None) -> int:
        """``step`` as an int in ``0 … n_steps`` (``None``: the end); raise otherwise."""
        n = self.n_steps
        if step is None:
            return n
        if not isinstance(step, int) or isinstance(step, bool):
            raise StepOutOfRange(f"step must be an integer, not {step!r}")
        at = step + n + 1 if step < 0 else step  # -1 is the end, like a list index
        if not 0 <= at <= n:  # the step as asked, not as shifted
            raise StepOutOfRange(
                f"step {step} out of range for {self.where}: 0 … {n} (or -{n + 1} … -1 from"
                " the end)"
            )
        return at


@functools.lru_cache(maxsize=16)
def game_for(rules: RuleSet) -> Game:
    """The (immutable) :class:`Game` of a rule set, built once: its tables cost more than
    dealing a hand."""
    return Game(rules)


def _initial_state(log: HandLog) -> State:
    try:
        return game_for(log.rules).new_initial_state(log.deck, log.dealer)
    except IllegalAction as e:
        raise IllegalAction(f"{log.where}: {e}") from None


def _apply(log: HandLog, state: State, k: int) -> None:
    seat, action = log.events[k]
    try:
        state.apply_checked(seat, action)
    except IllegalAction as e:
        raise IllegalAction(f"{log.where} event seq {k}: {e}") from None


def replay_hand(log: HandLog, step: int | None = None) -> State:
    """The state after the first ``step`` decisions (``None``: the final state).

    Every decision is applied through ``State.apply_checked``; an illegal one raises
    :class:`IllegalAction` naming the hand and the event seq.
    """
    step = log.check_step(step)
    state = _initial_state(log)
    for k in range(step):
        _apply(log, state, k)
    return state


@dataclass(frozen=True)
class Decision:
    """Decision ``step`` of a hand: who decided, what they could do, what they chose."""

    step: int
    seat: int
    action: int
    legal: tuple[int, ...]
    forced: bool
    deciders: tuple[int, ...]  # every seat still to declare at this point (priority order)
    phase: str
    card: int | None  # the card on offer (None for discards and the deal)
    owner: int | None

    @property
    def chosen_str(self) -> str:
        return action_str(self.action)

    @property
    def legal_str(self) -> list[str]:
        return [action_str(a) for a in self.legal]

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "seat": self.seat,
            "action": self.action,
            "chosen": self.chosen_str,
            "legal": list(self.legal),
            "legal_str": self.legal_str,
            "forced": self.forced,
            "deciders": list(self.deciders),
            "phase": self.phase,
            "card": self.card,
            "owner": self.owner,
        }


def _decision(log: HandLog, state: State, k: int) -> Decision:
    seat, action = log.events[k]
    return Decision(
        step=k,
        seat=seat,
        action=action,
        legal=tuple(state.legal_actions(seat)),
        forced=bool(state.is_forced()),
        deciders=tuple(state.deciders()),
        phase=state.phase.name,
        card=state.card,
        owner=state.owner,
    )


def decision_at(log: HandLog, k: int) -> Decision:
    """Event ``k`` (0-based seq) as a decision, read from the state before it.

    Raises :class:`StepOutOfRange` unless ``0 <= k < n_steps`` and :class:`IllegalAction`
    if the log breaks a rule up to and including event ``k``.
    """
    if not isinstance(k, int) or not 0 <= k < log.n_steps:
        raise StepOutOfRange(
            f"event {k!r} out of range for {log.where}: 0 … {log.n_steps - 1}"
            if log.n_steps
            else f"{log.where} has no events"
        )
    state = replay_hand(log, k)
    d = _decision(log, state, k)
    if d.action not in d.legal:
        _apply(log, state, k)  # raises IllegalAction with the location
    return d


class Replayer:
    """Step through one hand forward and backward; every state is computed once (checked)
    and kept, so moving back and forth is free.

    >>> from engine.deck import shuffle_deck
    >>> from engine.rules import find_rules
    >>> r = Replayer(HandLog.from_history(find_rules("hunan"), shuffle_deck(2), 1, []))
    >>> r.step, r.n_steps, r.state.dealer
    (0, 0, 1)
    """

    def __init__(self, log: HandLog) -> None:
        self.log = log
        self._states: list[State] = [_initial_state(log)]
        self._decisions: list[Decision] = []
        self.step = 0

    @property
    def n_steps(self) -> int:
        return self.log.n_steps

    def state_at(self, step: int | None) -> State:
        """The state after ``step`` decisions (a shared object: clone it to modify it)."""
        step = self.log.check_step(step)
        while len(self._states) <= step:
            k = len(self._states) - 1
            s = self._states[-1].clone()
            self._decisions.append(_decision(self.log, s, k))
            _apply(self.log, s, k)
            self._states.append(s)
        return self._states[step]

    def decision(self, k: int) -> Decision:
        if not 0 <= k < self.n_steps:
            raise StepOutOfRange(f"event {k} out of range for {self.log.where}")
        self.state_at(k + 1)
        return self._decisions[k]

    @property
    def state(self) -> State:
        return self.state_at(self.step)

    def seek(self, step: int | None) -> State:
        self.step = self.log.check_step(step)
        return self.state

    def forward(self, n: int = 1) -> State:
        return self.seek(min(self.n_steps, self.step + n))

    def back(self, n: int = 1) -> State:
        return self.seek(max(0, self.step - n))

    def next_decision_of(self, seat: int, include_forced: bool = False) -> int | None:
        """The first step after the current one at which ``seat`` decides (skipping forced
        decisions unless asked); ``None`` if there is none."""
        for k in range(self.step + 1, self.n_steps):
            if self.log.events[k][0] == seat and (include_forced or not self.decision(k).forced):
                return k
        return None

    def __iter__(self) -> Iterator[State]:
        for k in range(self.n_steps + 1):
            yield self.state_at(k)


def replayer_at(log: HandLog, step: int | None = None, seat: int | None = None) -> Replayer:
    """A :class:`Replayer` of ``log`` at ``step`` (``None``: the end; negative: from the
    end), for a view from ``seat`` (``None``: every hand): :class:`StepOutOfRange` for a
    step, :class:`PaohuziError` for a seat the hand does not have (what ``paohuzi replay``
    and the service's ``state`` answer)."""
    if seat is not None and not 0 <= seat < log.rules.players:
        raise PaohuziError(f"seat {seat} out of range: seats are 0 … {log.rules.players - 1}")
    rp = Replayer(log)
    rp.seek(log.check_step(step))
    return rp


# ---------------------------------------------------------------------------------------------
# Loading from the store
# ---------------------------------------------------------------------------------------------


def _as_store(store_or_path: Store | str | Path | None) -> Store:
    if isinstance(store_or_path, Store):
        return store_or_path
    return open_store(store_or_path)


def load_run(store_or_path: Store | str | Path | None, run: str) -> Run:
    """A run of the store (raises :class:`StoreError` with the known runs if absent)."""
    return _as_store(store_or_path).run(run)


def _shard_of(run: Run, hand_id: int) -> dict[str, Any]:
    shards = run.shards
    firsts = [s["first_hand"] for s in shards]
    i = bisect.bisect_right(firsts, hand_id) - 1
    if i >= 0 and hand_id < shards[i]["first_hand"] + shards[i]["hands"]:
        return shards[i]
    from replay.store.manage import format_ranges, hand_ranges

    have = format_ranges(hand_ranges(run.manifest))
    raise UnknownHand(f"run {run.name} has no hand {hand_id} ({have})")


def _open_parquet(run: Run, shard: dict[str, Any], table: str) -> pq.ParquetFile:
    path = run.shard_path(shard, table)
    try:
        return pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as e:
        raise CorruptLog(f"run {run.name}: cannot read shard {path}: {e}") from None


def read_hand_fast(run: Run, hand_id: int) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """One hand's ``hands`` row and ``events`` columns, found by id without a scan.

    The manifest's shard ranges give the shard; in it the hands table is sorted by
    ``hand_id`` (one row per hand, so the row is ``hand_id − first_hand``) and the events
    table by ``(hand_id, seq)``, so the hand's events start at the sum of ``n_events`` of
    the hands before it. Only the row groups that hold those rows are decoded.
    """
    if not isinstance(hand_id, int) or hand_id < 0:
        raise UnknownHand(f"bad hand id {hand_id!r}")
    shard = _shard_of(run, hand_id)
    run.check_shard(shard)  # size, rows, hand ids and SHA-256 against the manifest
    row = hand_id - shard["first_hand"]
    hpf = _open_parquet(run, shard, "hands")
    try:
        # a list, not .to_numpy(): a ChunkedArray's to_numpy imports pandas (0.15 s)
        n_events_col = hpf.read(columns=["n_events"]).column(0).to_pylist()
        if len(n_events_col) != shard["hands"]:
            raise CorruptLog(
                f"run {run.name}: shard {shard['index']} hands file has {len(n_events_col)}"
                f" rows, manifest says {shard['hands']}"
            )
        hands = _read_rows(hpf, row, 1)
        start = sum(n_events_col[:row])
        n = int(n_events_col[row])
        epf = _open_parquet(run, shard, "events")
        events = _read_rows(epf, start, n)
    except (OSError, pa.ArrowException) as e:
        raise CorruptLog(f"run {run.name}: cannot read hand {hand_id}: {e}") from None
    h = hands.to_pylist()
    if len(h) != 1 or h[0]["hand_id"] != hand_id:
        raise CorruptLog(f"run {run.name}: hand {hand_id} is not at its place in its shard")
    ev = events.to_pydict()
    ids = ev.get("hand_id", [])
    if len(ids) != n or any(x != hand_id for x in ids):
        raise CorruptLog(f"run {run.name}: events of hand {hand_id} are misplaced in its shard")
    return h[0], ev


def _read_rows(pf: pq.ParquetFile, start: int, n: int) -> pa.Table:
    """Rows ``start … start + n − 1`` of a Parquet file, decoding only their row groups."""
    md = pf.metadata
    groups, offset, first = [], 0, None
    for g in range(md.num_row_groups):
        rows = md.row_group(g).num_rows
        if offset + rows > start and offset < start + n:
            groups.append(g)
            if first is None:
                first = offset
        offset += rows
    if not groups:
        return pf.schema_arrow.empty_table()
    t = pf.read_row_groups(groups)
    return t.slice(start - (first or 0), n)


def load_hand(store_or_path: Store | str | Path | None, run: str, hand_id: int) -> HandLog:
    """One recorded hand as a :class:`HandLog` (rules from the manifest, deck, dealer,
    decisions, and the recorded rows). Raises :class:`StoreError` (unknown run),
    :class:`UnknownHand` or :class:`CorruptLog`."""
    r = run if isinstance(run, Run) else load_run(store_or_path, run)
    try:
        rules = r.rules
    except (PaohuziError, TypeError, KeyError) as e:
        raise CorruptLog(f"run {r.name}: bad rules in the manifest: {e}") from None
    hand, ev = read_hand_fast(r, int(hand_id))
    return log_from_rows(r.name, rules, hand, ev)


def log_from_rows(
    run: str | None, rules: RuleSet, hand: dict[str, Any], ev: dict[str, list[Any]]
) -> HandLog:
    """A :class:`HandLog` from a ``hands`` row and its ``events`` columns."""
    deck = hand["deck"]
    return HandLog(
        rules=rules,
        deck=tuple(deck) if deck is not None else (),
        dealer=int(hand["dealer"]),
        events=tuple(zip(ev.get("seat", []), ev.get("action", []))),
        hand=hand,
        event_rows=ev,
        run=run,
        hand_id=int(hand["hand_id"]),
    )


# ---------------------------------------------------------------------------------------------
# Listing
# ---------------------------------------------------------------------------------------------


def list_runs(store_or_path: Store | str | Path | None = None) -> list[dict[str, Any]]:
    """One summary per run: name, status, hands, rules preset, players, policies, seed.
    A run whose manifest cannot be read is listed with its ``error``."""
    st = _as_store(store_or_path)
    out: list[dict[str, Any]] = []
    for name in st.run_names():
        try:
            r = st.run(name)
        except (PaohuziError, StoreError) as e:
            out.append({"run": name, "error": str(e)})
            continue
        m = r.manifest
        params = m.get("params", {})
        out.append(
            {
                "run": name,
                "status": r.status,
                "hands": r.n_hands,
                "rules_preset": m.get("rules_preset"),
                "players": m.get("rules", {}).get("players"),
                "policies": params.get("policies"),
                "seed": params.get("seed"),
                "imported": Manifest(m).imported,
            }
        )
    return out


#: Columns of :func:`list_hands` (every ``hands`` column but the deck).
HAND_LIST_COLUMNS = [f.name for f in schema.HANDS_SCHEMA if f.name != "deck"]


def list_hands(
    store_or_path: Store | str | Path | None, run: str, offset: int = 0, limit: int | None = 100
) -> list[dict[str, Any]]:
    """The ``hands`` rows ``offset … offset + limit − 1`` of a run (without the deck),
    reading only the shards that hold them."""
    r = load_run(store_or_path, run)
    out: list[dict[str, Any]] = []
    end = r.n_hands if limit is None else offset + limit
    for shard in r.shards:
        lo, n = shard["first_hand"], shard["hands"]
        if lo + n <= offset or lo >= end:
            continue
        pf = _open_parquet(r, shard, "hands")
        a, b = max(offset, lo) - lo, min(end, lo + n) - lo
        try:
            t = _read_rows(pf, a, b - a).select(HAND_LIST_COLUMNS)
        except (OSError, pa.ArrowException, KeyError) as e:
            raise CorruptLog(f"run {r.name}: cannot read shard {shard['index']}: {e}") from None
        out += t.to_pylist()
    return out
