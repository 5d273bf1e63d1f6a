"""The summary files' format: per shard, small counts and sums from which every number of ``paohuzi
stats`` and of the dashboard's pages follows exactly, without reading the ``hands`` table.

One Parquet file per shard, ``summary/part-NNNNN.parquet`` (listed in the manifest as
``files.summary`` with path, rows, bytes, sha256 and ``version``), one long table whose
``kind`` column says which summary a row belongs to (docs/LOG_FORMAT.md §10):

* additive kinds, summed over shards and filtered by bit tests on a *selection mask*:
  ``hands`` (per rotation, dealer, outcome, winner, source, 自摸, 荒庄 streak: hands and the
  sums of 胡息, 胡息², score, score²), ``stock`` (per rotation, outcome, cards left),
  ``values`` (per rotation, winner: the full histograms of 胡息, 等, 番, score over wins),
  ``mingtang`` (per rotation, winner, 名堂 bit; −1 平胡, −2 every win), ``conv`` (per bin of
  ``granule`` hands, rotation, seat, policy: seat-hands and wins);
* cluster kinds, one set of rows per selection mask a filter can give (enumerated here,
  :func:`seat_masks`): ``clusters`` (what = ``g:seat`` / ``g:dealer`` / ``g:policy`` /
  ``g:all`` seat-level groups with their cluster sums of the score change; ``win`` and
  ``win:huxi`` … the wins and the cluster sums of each value; ``win_source`` / ``win_bit``
  distinct clusters per source and 名堂; ``hand`` / ``hand_streak`` distinct clusters of the
  hand-level selection) and ``paired`` (``--duplicate``: sums of the per-deal differences
  between two policies). A cluster is a deal (a hand outside ``--duplicate`` runs); the
  rotations of a deal are always in one shard, so cluster sums add over shards;
* event kinds ``ev_*``, from the shard's ``events`` (what players do: actions, declines,
  forced share, options, per-hand counts, win timing, hand length, paired differences) and
  its per-hand facts (破跑胡, 比牌, claim conflicts, the winning readings' group types;
  :mod:`replay.derived.summarize_events` says what each holds).

A selection (the dashboard's seats S and policies P; ``paohuzi stats``: everything) becomes,
per run, a **seat mask**: bit ``4·rotation + seat`` is set when that seat in that rotation is
selected (:func:`seat_mask`), and a **rotation mask** for the hand-level numbers
(:func:`hand_mask`). Seat-level rows are tested on (rotation, seat), wins on (rotation,
winner), hands on the rotation.

>>> seat_mask([("a", "b", "a")], 3, (), ("a",))
5
>>> hand_mask([("a", "b", "c"), ("c", "a", "b"), ("b", "c", "a")], (1,), ("a",))
2

This module is the format and nothing else (a leaf: it imports no other module of the
store): its columns, its kinds, the selection masks, which shards and runs have a summary.
Computing a shard's rows is :mod:`replay.derived.summarize` (numpy) and its SQL reference
:mod:`replay.derived.summarize_sql`; writing and indexing them :mod:`replay.derived.summaries`;
the catalog's views over them :mod:`replay.store.catalog`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from engine.outcome import OutcomeKind
from replay.lazy import lazy_attributes
from replay.schema import MAX_SEATS
from replay.schema import MINGTANG_BITS as _SCHEMA_BITS

if TYPE_CHECKING:
    import pyarrow as pa

#: Bumped when the summary's content changes; ``paohuzi index`` rebuilds older entries.
#: 2: the ``paired`` float sums run in deal_id order (the same bytes on every build).
#: 3: the event kinds ``ev_*`` (:mod:`replay.derived.summarize_events`), from ``events``.
#: 4: ``ev_length``, the hands' length in decisions and in draws with its cluster sums.
#: 5: ``ev_facts`` and ``ev_groups``, from the shard's per-hand facts.
SUMMARY_VERSION = 5
SUMMARY_TABLE = "summary"
HUANG = int(OutcomeKind.HUANGZHUANG)

if TYPE_CHECKING:
    #: The columns of a summary file (every kind uses some of them; the others are null).
    SUMMARY_SCHEMA: pa.Schema
else:  # built on first use: pyarrow only for what reads or writes the files
    __getattr__ = lazy_attributes(__name__, {"SUMMARY_SCHEMA": lambda: _summary_schema()})


@functools.cache
def _summary_schema() -> pa.Schema:
    """:data:`SUMMARY_SCHEMA` (one object for every caller)."""
    import pyarrow as pa

    return pa.schema(
        [
            ("kind", pa.string()),
            ("rotation", pa.uint8()),
            ("dealer", pa.uint8()),
            ("outcome", pa.uint8()),
            ("winner", pa.uint8()),
            ("source", pa.uint8()),
            ("zimo", pa.bool_()),
            ("streak", pa.uint8()),
            ("stock", pa.uint8()),
            ("seat", pa.uint8()),
            ("policy", pa.string()),
            ("metric", pa.string()),
            ("v", pa.int32()),
            ("bit", pa.int16()),
            ("granule", pa.uint32()),
            ("bin", pa.uint32()),
            ("mask", pa.uint16()),
            ("what", pa.string()),
            ("key", pa.string()),
            ("action", pa.uint8()),
            ("forced", pa.bool_()),
            ("a", pa.string()),
            ("b", pa.string()),
            ("n", pa.int64()),
            ("k", pa.int64()),
            ("won", pa.int64()),
            ("d", pa.int64()),
            ("y", pa.int64()),
            ("m", pa.int64()),
            ("yy", pa.int64()),
            ("ym", pa.int64()),
            ("mm", pa.int64()),
            ("huxi_s", pa.int64()),
            ("huxi_ss", pa.int64()),
            ("score_s", pa.int64()),
            ("score_ss", pa.int64()),
            ("extra_s", pa.int64()),
            ("dw", pa.float64()),
            ("dww", pa.float64()),
            ("dy", pa.float64()),
            ("dyy", pa.float64()),
        ]
    )


#: Per kind, the key columns its rolled-up view groups by and the columns it sums.
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "hands": (
        ("rotation", "dealer", "outcome", "winner", "source", "zimo", "streak"),
        ("n", "huxi_s", "huxi_ss", "score_s", "score_ss"),
    ),
    "stock": (("rotation", "outcome", "stock"), ("n",)),
    "values": (("rotation", "winner", "metric", "v"), ("n",)),
    "mingtang": (
        ("rotation", "winner", "bit"),
        ("n", "huxi_s", "huxi_ss", "score_s", "score_ss", "extra_s"),
    ),
    "conv": (("granule", "bin", "rotation", "seat", "policy"), ("n", "won")),
    "clusters": (("mask", "what", "key"), ("n", "won", "d", "y", "m", "yy", "ym", "mm")),
    "paired": (("mask", "a", "b"), ("d", "dw", "dww", "dy", "dyy")),
    # what players do, from the events (replay.derived.summarize_events)
    "ev_actions": (("mask", "policy", "action", "forced"), ("n", "d", "m", "yy", "ym", "mm")),
    "ev_declines": (("mask", "policy", "action"), ("n", "k", "d")),
    "ev_forced": (("mask", "policy"), ("n", "k", "d")),
    "ev_options": (("rotation", "seat", "policy", "v"), ("n",)),
    "ev_hands": (("rotation", "v", "what"), ("n",)),
    "ev_wins": (("rotation", "winner", "stock"), ("n",)),
    "ev_length": (("mask", "what"), ("n", "d", "y", "m", "yy", "ym", "mm")),
    "ev_paired": (("mask", "a", "b", "action", "forced"), ("d", "dy", "dyy")),
    # and from the per-hand facts
    "ev_facts": (("mask", "policy", "what"), ("n", "d", "k", "y")),
    "ev_groups": (("rotation", "winner", "what"), ("n", "k", "huxi_s")),
}

VALUE_COLS = ("huxi", "deng", "fan", "score")
MINGTANG_BITS = max(_SCHEMA_BITS.values()) + 1  # bits 0 … 13 of hands.mingtang


# ---------------------------------------------------------------------------------------------
# Selections
# ---------------------------------------------------------------------------------------------


def seat_policies(policies: Sequence[str], players: int, rotations: int) -> list[tuple[str, ...]]:
    """Who plays each seat in each rotation: seat ``s`` of rotation ``r`` is played by
    ``policies[(s − r) mod players]`` (docs/LOG_FORMAT.md §6)."""
    return [tuple(policies[(s - r) % players] for s in range(players)) for r in range(rotations)]


def seat_mask(
    per_rotation: Sequence[Sequence[str]],
    players: int,
    seats: Sequence[int] = (),
    policies: Sequence[str] = (),
) -> int:
    """Bit ``4·r + s`` for each seat ``s`` of rotation ``r`` in ``seats`` (all if empty)
    played by one of ``policies`` (any if empty): the seat-level and win selection."""
    m = 0
    for r, pols in enumerate(per_rotation):
        for s in range(players):
            if (seats and s not in seats) or (policies and pols[s] not in policies):
                continue
            m |= 1 << (MAX_SEATS * r + s)
    return m


def hand_mask(
    per_rotation: Sequence[Sequence[str]], seats: Sequence[int] = (), policies: Sequence[str] = ()
) -> int:
    """Bit ``r`` for each rotation in which one of ``seats`` (any seat if empty, the 坐醒
    sitter included) is played by one of ``policies``; every rotation without policies (the
    dashboard's hand-level selection)."""
    if not policies:
        return (1 << len(per_rotation)) - 1
    m = 0
    for r, pols in enumerate(per_rotation):
        if any(0 <= i < len(pols) and pols[i] in policies for i in (seats or range(MAX_SEATS))):
            m |= 1 << r
    return m


def seat_masks(per_rotation: Sequence[Sequence[str]], players: int) -> list[int]:
    """Every non-empty seat mask a choice of seats and policies gives (the masks the
    cluster rows are computed for)."""
    names = sorted({p for pols in per_rotation for p in pols})
    seat_sets = [
        c for k in range(1, players + 1) for c in itertools.combinations(range(players), k)
    ]
    pol_sets: list[tuple[str, ...]] = [()] + [
        c for k in range(1, len(names) + 1) for c in itertools.combinations(names, k)
    ]
    masks = {seat_mask(per_rotation, players, s, p) for s in seat_sets for p in pol_sets}
    masks.discard(0)
    return sorted(masks)


#: Hands per bin of the ``conv`` rows of a run of imported hands: fixed, since such a run
#: grows with every import (a simulated run's granule follows its planned hands).
IMPORTED_GRANULE = 64


def cluster_masks(shape: Shape) -> tuple[list[int], list[int]]:
    """The seat masks and the rotation masks a run's cluster rows (``clusters``,
    ``ev_actions``, ``ev_declines``, ``ev_forced``; ``ev_length`` by rotation mask) are
    computed for. In a run of imported
    hands each policy class has its own: the masks of its seats alone (bits ``4·c + s``) and
    ``1 << c``; a hand of class ``c`` counts only under a selection's bits of ``c`` (each
    hand is its own cluster), so a class's rows never change when classes are added."""
    if not shape.classes:
        return seat_masks(shape.per, shape.players), list(range(1, 1 << len(shape.per)))
    seat = sorted(
        m << (MAX_SEATS * c)
        for c, pols in enumerate(shape.per)
        for m in seat_masks([pols], shape.players)
    )
    return seat, [1 << c for c in range(len(shape.per))]


def selection_masks(
    per: Sequence[Sequence[str]],
    players: int,
    seats: Sequence[int],
    policies: Sequence[str],
    classes: bool,
) -> list[tuple[int, int]]:
    """A selection's (seat mask, rotation mask) pairs for one run: one pair; for a run of
    imported hands one per policy class, each within the bits of its class (the cluster
    rows of :func:`cluster_masks`; a row of class ``c`` passes the bit tests of pair ``c``
    alone, so every row is counted once)."""
    if not classes:
        return [(seat_mask(per, players, seats, policies), hand_mask(per, seats, policies))]
    return [
        (
            seat_mask([pols], players, seats, policies) << (MAX_SEATS * c),
            hand_mask([pols], seats, policies) << c,
        )
        for c, pols in enumerate(per)
    ]


def granule(hands_total: int) -> int:
    """Hands per bin of the ``conv`` rows: the largest power of two ≤ hands_total / 100
    (:data:`IMPORTED_GRANULE` in a run of imported hands)."""
    g = 1
    while g * 2 <= max(1, hands_total // 100):
        g *= 2
    return g


class Shape(NamedTuple):
    """What a run's summaries depend on: its players; who plays each seat in each
    *rotation* (the summary's ``rotation`` key); --duplicate; the ``conv`` granule; and
    whether the rotations are the policy classes of a run of imported hands."""

    players: int
    per: list[tuple[str, ...]]
    duplicate: bool
    granule: int
    classes: bool


def run_shape(manifest: dict[str, Any]) -> Shape:
    """The :class:`Shape` of a manifest's ``rules`` and ``params``. A simulated run's
    rotations follow its policies (:func:`seat_policies`); a run of imported hands (no
    ``params.policies``) has instead its ``params.seat_policies``: the distinct assignments
    of policies to seats its hands have, in the order they were first imported, each hand
    summarised under the index of its own (:func:`policy_classes`)."""
    from replay.store.params import RunParams

    rules = manifest.get("rules", {})
    raw = manifest.get("params") or {}
    params = RunParams.of(raw)
    players = int(rules.get("players", 3))
    if not params.policies:
        per = [tuple(c) for c in raw.get("seat_policies") or ()]
        return Shape(players, per, False, IMPORTED_GRANULE, True)
    duplicate = params.duplicate
    rotations = params.rotations if raw.get("rotations") else (players if duplicate else 1)
    per = seat_policies(list(params.policies), players, rotations)
    return Shape(players, per, duplicate, granule(params.hands_total), False)


def summarizable(params: Any) -> bool:
    """Whether a run's shards can have summaries: always for a simulated run; for a run of
    imported hands while its hands have at most :data:`MAX_SEATS` policy classes (a
    selection mask has a bit per seat of each in 16), which
    :func:`policy_classes` records."""
    p = params or {}
    return bool(p.get("policies")) or (
        bool(p.get("seat_policies")) and not p.get("seat_policies_overflow")
    )


def policy_classes(
    known: Sequence[Sequence[str]], seen: Sequence[Sequence[str]]
) -> tuple[list[list[str]], bool]:
    """A run of imported hands' policy classes after hands whose seats are played by
    ``seen`` (per hand, its policies by seat): ``known`` followed by each new assignment in
    the order first seen, and whether that made more than :data:`MAX_SEATS` (then the list
    keeps the first ones, and the run's figures come from its hands)."""
    out = [list(c) for c in known]
    have = {tuple(c) for c in out}
    for c in seen:
        t = tuple(c)
        if t not in have:
            if len(out) == MAX_SEATS:
                return out, True
            have.add(t)
            out.append(list(t))
    return out, False


def add_policy_classes(params: dict[str, Any], seen: Sequence[Sequence[str]]) -> bool:
    """Record in a run of imported hands' ``params`` the policy classes of hands whose seats
    are played by ``seen`` (:func:`policy_classes`): ``seat_policies`` extended, or
    ``seat_policies_overflow`` set past :data:`MAX_SEATS` classes; whether those hands can
    be summarised (not after an overflow, now or before)."""
    if params.get("seat_policies_overflow"):
        return False
    classes, over = policy_classes(params.get("seat_policies") or [], seen)
    if over:
        params["seat_policies_overflow"] = True
        return False
    params["seat_policies"] = classes
    return True


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def conform(kind: str, t: pa.Table) -> pa.Table:
    """A kind's rows as a table of :data:`SUMMARY_SCHEMA` (nulls in the unused columns)."""
    import pyarrow as pa

    schema = _summary_schema()
    n = t.num_rows
    cols = []
    for f in schema:
        if f.name == "kind":
            cols.append(pa.array([kind] * n, pa.string()))
        elif f.name in t.column_names:
            cols.append(t.column(f.name).cast(f.type))
        else:
            cols.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def summary_path(index: int) -> str:
    """A shard's summary file, relative to its run folder."""
    return f"{SUMMARY_TABLE}/part-{index:05d}.parquet"


def has_summary(shard: dict[str, Any]) -> bool:
    """Whether a manifest's shard entry lists a summary file of this version."""
    e = shard.get("files", {}).get(SUMMARY_TABLE)
    return isinstance(e, dict) and e.get("version") == SUMMARY_VERSION


def summary_hands(path: Any) -> int:
    """The hands a summary file counts (``n`` summed over its ``hands`` rows): its shard's
    hand count when it summarises that shard. Raises as :func:`pyarrow.parquet.read_table`
    does."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.ParquetFile(path).read(columns=["kind", "n"])  # no filters: no pyarrow.dataset
    n = pc.filter(t.column("n"), pc.equal(t.column("kind"), "hands"))
    return int(pc.sum(n).as_py() or 0)


def summarized(info: Any) -> bool:
    """Whether a scanned run (:class:`~replay.store.scan.RunInfo`) has a checked summary file
    for every listed shard."""
    n_hands = sum(1 for t, _ in info.files if t == "hands")
    n_sum = sum(1 for t, _ in info.files if t == SUMMARY_TABLE)
    return info.usable and n_hands > 0 and n_sum == n_hands


def duck_type(t: pa.DataType) -> str:
    """The DuckDB type of an Arrow column type of the store's files (``BLOB`` for binary)."""
    return _duck_types().get(t, "BLOB")


@functools.cache
def _duck_types() -> dict[pa.DataType, str]:
    import pyarrow as pa

    return {
        pa.string(): "VARCHAR",
        pa.uint8(): "UTINYINT",
        pa.uint16(): "USMALLINT",
        pa.uint32(): "UINTEGER",
        pa.int16(): "SMALLINT",
        pa.int32(): "INTEGER",
        pa.int64(): "BIGINT",
        pa.float64(): "DOUBLE",
        pa.bool_(): "BOOLEAN",
    }
