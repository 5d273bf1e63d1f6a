"""The facts files' format: per shard, one row per hand of exact facts that the ``hands``
table does not hold and a replay gives — the winning reading's groups, its hu option and
破跑胡, and per seat the 臭胡, 忍碰 and 比牌 of the hand, and its claim conflicts
(docs/LOG_FORMAT.md §12).

One Parquet file per shard, ``facts/part-NNNNN.parquet``, listed in the manifest as
``files.facts`` with path, rows, bytes, sha256 and ``version``; rows in ``hand_id`` order,
one per hand of the shard. The group columns come from the engine's one list of group
kinds (:class:`engine.groups.GroupKind`): ``g_<kind>_n`` and ``g_<kind>_huxi`` for each.

>>> GROUP_COLUMNS[:2]
['g_chi_n', 'g_chi_huxi']
>>> facts_path(3)
'facts/part-00003.parquet'

This module is the format and nothing else (a leaf, like
:mod:`replay.store.summary_schema`): computing the rows is :mod:`replay.derived.facts`,
writing and indexing them :mod:`replay.derived.facts_files`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from engine.groups import GroupKind
from replay.lazy import lazy_attributes
from replay.schema import MAX_SEATS

if TYPE_CHECKING:
    import pyarrow as pa

#: Bumped when the facts' content changes; ``paohuzi index`` rebuilds older entries.
FACTS_VERSION = 1
FACTS_TABLE = "facts"

#: The group kinds of a winning reading, in code order (the column names use their names).
GROUP_KINDS: tuple[GroupKind, ...] = tuple(GroupKind)
#: Their names, lower case: the ``<type>`` of the ``g_<type>_*`` columns.
GROUP_TYPES: tuple[str, ...] = tuple(k.name.lower() for k in GROUP_KINDS)
GROUP_COLUMNS: list[str] = [c for t in GROUP_TYPES for c in (f"g_{t}_n", f"g_{t}_huxi")]
#: The per-seat counts, ``<name>_0`` … ``<name>_3``.
SEAT_COUNTS = ("chouhu", "renpeng", "bipai")

if TYPE_CHECKING:
    #: (name, type, doc) of every column, in file order.
    FACTS_COLUMNS: list[tuple[str, pa.DataType, str]]
    #: The columns of a facts file.
    FACTS_SCHEMA: pa.Schema
else:  # built on first use: pyarrow only for what reads or writes the files
    __getattr__ = lazy_attributes(
        __name__,
        {"FACTS_COLUMNS": lambda: _facts_columns(), "FACTS_SCHEMA": lambda: _facts_schema()},
    )


@functools.cache
def _facts_columns() -> list[tuple[str, pa.DataType, str]]:
    """:data:`FACTS_COLUMNS` (one object for every caller)."""
    import pyarrow as pa

    return [
        ("hand_id", pa.uint32(), "the hand (hands.hand_id)"),
        (
            "option",
            pa.string(),
            "hu option of the winning reading: F, K, P, W (RULES §10.3), 0 (a dealt hand, step 0)"
            " or A (3提/5坎 天胡); null without a win",
        ),
        (
            "popao",
            pa.bool_(),
            "破跑胡: option F taken while option K, P or W applied to the hu card; null without a win",
        ),
        *[
            (
                f"g_{k.name.lower()}_{what}",
                pa.uint8() if what == "n" else pa.int16(),
                f"{'groups' if what == 'n' else '胡息 of the groups'} of kind {k.name} in the"
                " winning reading; null without a win",
            )
            for k in GROUP_KINDS
            for what in ("n", "huxi")
        ],
        *[
            (
                f"{name}_{s}",
                pa.uint8(),
                f"{doc} by seat {s}; null for a seat the table does not have",
            )
            for name, doc in (
                ("chouhu", "臭胡: offered 胡 declined in a round nobody won by 胡"),
                ("renpeng", "忍碰: offered 碰 (not forced) answered by 过 or 吃"),
                ("bipai", "比牌: executed eats that laid 比 groups"),
            )
            for s in range(MAX_SEATS)
        ],
        (
            "conflicts",
            pa.uint8(),
            "claim rounds in which two or more seats declared a claim (胡, 碰, 吃) on one card",
        ),
    ]


@functools.cache
def _facts_schema() -> pa.Schema:
    """:data:`FACTS_SCHEMA` (one object for every caller)."""
    import pyarrow as pa

    return pa.schema([pa.field(n, t, nullable=n != "hand_id") for n, t, _ in _facts_columns()])


def facts_path(index: int) -> str:
    """The run-relative path of shard ``index``'s facts file."""
    return f"{FACTS_TABLE}/part-{index:05d}.parquet"


def has_facts(shard: dict[str, Any]) -> bool:
    """Whether a manifest shard entry lists a facts file of this version."""
    entry = (shard.get("files") or {}).get(FACTS_TABLE)
    return isinstance(entry, dict) and entry.get("version") == FACTS_VERSION
