"""The log schema: the two Parquet tables, their stable integer codes and the schema version.

A run is two tables (docs/LOG_FORMAT.md is the full reference):

* ``hands``: one row per hand: ids, session, dealer, the 80-card deck, the outcome
  (胡 / 荒庄 / 天胡), winner, source of the hu card, 胡息, 等, 番, 名堂, per-seat score deltas,
  cards left in the stock, number of events.
* ``events``: one row per action, declines included: hand, seq, seat, action code and kind,
  the card it is about, whose card it was, forced or chosen, and the legal options.

Codes are never renumbered (STYLE §13): a new outcome, source, action kind or 名堂 gets a new
code, and a change of meaning bumps :data:`SCHEMA_VERSION`.

>>> from replay.schema import EVENTS_SCHEMA, HANDS_SCHEMA  # built on first use (pyarrow)
>>> [f.name for f in HANDS_SCHEMA][:6]
['hand_id', 'session', 'session_hand', 'rotation', 'deal_id', 'dealer']
>>> [f.name for f in EVENTS_SCHEMA]
['hand_id', 'seq', 'seat', 'action', 'kind', 'card', 'from_seat', 'forced', 'n_legal', 'options']
>>> mingtang_names(mingtang_mask("hunan", ["红胡", "海底"]))
['honghu', 'haidi']
>>> options_mask([0, 2, 144])
133
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from engine.actions import ActionKind
from engine.mingtang import MINGTANG_BITS as _ENGINE_MINGTANG_BITS
from engine.mingtang import REGISTRY
from engine.outcome import OutcomeKind, Source
from engine.session import SEED_METHOD_VERSION as _SEED_METHOD_VERSION
from replay.lazy import lazy_attributes

if TYPE_CHECKING:
    import pyarrow as pa

#: Version of the table layout and of the meaning of every column and code. Readers refuse
#: a version they do not know. History: 1 = first release.
SCHEMA_VERSION = 1

#: Version of the seed derivation (session seeds, deal seeds, policy seeds; defined with it,
#: ``engine.session.RunSeeds``). The deck shuffle has its own ``engine.deck.SHUFFLE_VERSION``.
SEED_METHOD_VERSION = _SEED_METHOD_VERSION

#: Seats a table can have (4 with the 坐醒 variant); per-seat columns exist for all of them.
MAX_SEATS = 4

#: The value a nullable uint8 column holds in the recorder's buffers before it becomes null.
NULL8 = 255

# ---------------------------------------------------------------------------------------------
# Codes
# ---------------------------------------------------------------------------------------------

#: 名堂 bits of ``hands.mingtang`` by pinyin id (``engine.mingtang.REGISTRY`` keys), in bit
#: order: each pattern's ``bit`` (engine/mingtang.py, where they are kept stable: a new
#: pattern takes a new bit, none is ever reordered).
MINGTANG_BITS: dict[str, int] = dict(sorted(_ENGINE_MINGTANG_BITS.items(), key=lambda kv: kv[1]))

# The engine reports a 名堂 by its Chinese name, which Hunan and Luzhou share for 红胡 and
# 地胡; the ruleset tells them apart.
_MINGTANG_BY_NAME: dict[str, dict[str, int]] = {"hunan": {}, "luzhou": {}}
for _pinyin, _cls in REGISTRY.items():
    _table = "luzhou" if _pinyin.startswith("lz_") else "hunan"
    _MINGTANG_BY_NAME[_table][_cls.name] = MINGTANG_BITS[_pinyin]
_PINYIN_BY_BIT = {b: p for p, b in MINGTANG_BITS.items()}


def mingtang_mask(ruleset: str, names: Iterable[str]) -> int:
    """The ``hands.mingtang`` bitmask of the 名堂 a result reports (Chinese names)."""
    table = _MINGTANG_BY_NAME[ruleset]
    mask = 0
    for name in names:
        mask |= 1 << table[name]
    return mask


def mingtang_names(mask: int) -> list[str]:
    """The pinyin ids of the bits set in a ``hands.mingtang`` value, in bit order."""
    return [_PINYIN_BY_BIT[b] for b in sorted(_PINYIN_BY_BIT) if mask >> b & 1]


# Bit of each legal action code's kind, for codes below the 吃 range.
_KIND_BIT = [0] * 100
_KIND_BIT[0] = 1 << ActionKind.PASS
_KIND_BIT[1] = 1 << ActionKind.HU
_KIND_BIT[2] = 1 << ActionKind.PENG
for _code in range(10, 90):
    _KIND_BIT[_code] = 1 << (ActionKind.DISCARD + (_code - 10) // 20)
_CHI_BIT = 1 << ActionKind.CHI


def options_mask(legal: list[int]) -> int:
    """``events.options``: bit k set iff some legal action has ``ActionKind`` k.

    Relies on how the engine builds legal sets (sorted; one phase at a time: all discards, a
    single forced take, ``[PASS, HU]``, or ``[PASS, (PENG,) 吃…]``), so the first two codes and
    the last one carry every kind present.
    """
    first = legal[0]
    last = legal[-1]
    m = (_KIND_BIT[first] if first < 100 else _CHI_BIT) | (
        _KIND_BIT[last] if last < 100 else _CHI_BIT
    )
    if len(legal) > 2:
        second = legal[1]
        m |= _KIND_BIT[second] if second < 100 else _CHI_BIT
    return m


def codes() -> dict[str, Any]:
    """Every code table, as written to the manifest (``codes``) and to the catalog."""
    return {
        "outcome": {k.name: int(k) for k in OutcomeKind},
        "source": {s.name: int(s) for s in Source},
        "action_kind": {k.name: int(k) for k in ActionKind},
        "action_ranges": {
            "PASS": [0, 0],
            "HU": [1, 1],
            "PENG": [2, 2],
            "DISCARD": [10, 29],
            "TI": [30, 49],
            "WEI": [50, 69],
            "PAO": [70, 89],
            "CHI": [101, 69020],
        },
        "mingtang": [
            {"bit": b, "pinyin": p, "name": REGISTRY[p].name, "level": REGISTRY[p].level}
            for p, b in MINGTANG_BITS.items()
        ],
    }


# ---------------------------------------------------------------------------------------------
# Arrow schemas
# ---------------------------------------------------------------------------------------------


#: Sort order of each table (rows are written in this order; shards cover increasing hands).
SORT_KEYS: dict[str, tuple[str, ...]] = {"hands": ("hand_id",), "events": ("hand_id", "seq")}

#: The tables, in the order of :data:`SCHEMAS`.
TABLES = ("hands", "events")

if TYPE_CHECKING:
    #: The ``hands`` table.
    HANDS_SCHEMA: pa.Schema
    #: The ``events`` table.
    EVENTS_SCHEMA: pa.Schema
    #: Both, by table name.
    SCHEMAS: dict[str, pa.Schema]
else:  # built on first use: ``paohuzi stats``, which asks DuckDB, starts without pyarrow
    __getattr__ = lazy_attributes(
        __name__,
        {
            "SCHEMAS": lambda: _schemas(),
            "HANDS_SCHEMA": lambda: _schemas()["hands"],
            "EVENTS_SCHEMA": lambda: _schemas()["events"],
        },
    )


@functools.cache
def _schemas() -> dict[str, pa.Schema]:
    """:data:`SCHEMAS` (one object for every caller)."""
    import pyarrow as pa

    def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = False) -> pa.Field:
        return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})

    hands = pa.schema(
        [
            _f("hand_id", pa.uint32(), "hand index in the run, 0..N-1, in play order"),
            _f("session", pa.uint32(), "session index (a table of consecutive hands)"),
            _f("session_hand", pa.uint16(), "deal number within the session, 0-based"),
            _f("rotation", pa.uint8(), "policy rotation (0 unless --duplicate)"),
            _f("deal_id", pa.uint32(), "index of the deck; equal for the rotations of one deal"),
            _f("dealer", pa.uint8(), "dealer seat (庄家)"),
            _f("huang_streak", pa.uint8(), "consecutive 荒庄 before this hand at this dealer"),
            _f("deck", pa.binary(80), "80 card kinds 0..19, position 0 first (RULES §3, C2)"),
            _f("outcome", pa.uint8(), "OutcomeKind: 0 胡, 1 荒庄, 2 3提/5坎 天胡, 3 天胡"),
            _f("winner", pa.uint8(), "winning seat; null for 荒庄", True),
            _f("source", pa.uint8(), "hu.Source of the hu card; null for 荒庄 and 3提/5坎", True),
            _f("hu_card", pa.uint8(), "the hu card kind; null if none", True),
            _f("from_seat", pa.uint8(), "seat that drew/discarded/showed the hu card", True),
            _f("huxi", pa.int16(), "胡息 of the winning split; null for 荒庄", True),
            _f("deng", pa.int16(), "等; null for 荒庄", True),
            _f("fan", pa.int16(), "番 (Luzhou: multiplier); null for 荒庄", True),
            _f("score", pa.int32(), "score each loser pays; null for 荒庄", True),
            _f("mingtang", pa.uint16(), "名堂 bitmask (MINGTANG_BITS); 0 for none"),
            _f("zimo", pa.bool_(), "the win counts as 自摸; null for 荒庄", True),
            _f("delta_0", pa.int32(), "score change of seat 0"),
            _f("delta_1", pa.int32(), "score change of seat 1"),
            _f("delta_2", pa.int32(), "score change of seat 2"),
            _f("delta_3", pa.int32(), "score change of seat 3; null with 3 players", True),
            _f("policy_0", pa.string(), "policy playing seat 0"),
            _f("policy_1", pa.string(), "policy playing seat 1"),
            _f("policy_2", pa.string(), "policy playing seat 2"),
            _f("policy_3", pa.string(), "policy playing seat 3; null with 3 players", True),
            _f("stock_left", pa.uint8(), "cards left in the stock at the end"),
            _f("n_events", pa.uint16(), "number of rows of this hand in events"),
        ],
        metadata={"paohuzi.table": "hands", "paohuzi.schema_version": str(SCHEMA_VERSION)},
    )
    events = pa.schema(
        [
            _f("hand_id", pa.uint32(), "the hand (hands.hand_id)"),
            _f("seq", pa.uint16(), "0-based position in the hand's history"),
            _f("seat", pa.uint8(), "seat that acted"),
            _f("action", pa.int32(), "engine.actions code"),
            _f("kind", pa.uint8(), "ActionKind of the code"),
            _f(
                "card", pa.uint8(), "face of the action, else the card on offer; null if none", True
            ),
            _f("from_seat", pa.uint8(), "owner of the card on offer; null if none", True),
            _f("forced", pa.bool_(), "a compulsory decision (forced 提/偎/跑, compulsory 碰)"),
            _f("n_legal", pa.uint8(), "number of legal options the seat had"),
            _f("options", pa.uint8(), "bitmask of the ActionKinds among the legal options"),
        ],
        metadata={"paohuzi.table": "events", "paohuzi.schema_version": str(SCHEMA_VERSION)},
    )
    return {"hands": hands, "events": events}


def describe(table: str) -> list[dict[str, Any]]:
    """The columns of a table as ``{name, type, nullable, doc}`` (for the manifest)."""
    return [
        {
            "name": f.name,
            "type": str(f.type),
            "nullable": f.nullable,
            "doc": (f.metadata or {}).get(b"doc", b"").decode(),
        }
        for f in _schemas()[table]
    ]
