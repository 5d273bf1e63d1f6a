"""Figures from the per-hand ``facts`` (docs/LOG_FORMAT.md §12): the group types of the
winning readings over every selected win of the runs that have facts (a run recorded before
them has none until ``paohuzi index``; :attr:`replay.store.scan.RunInfo.has_facts` says which).

>>> sql, params = group_sources(Selection(runs=("a",)))
>>> "g_kan_huxi" in sql and "JOIN facts" in sql
True
"""

from __future__ import annotations

from replay.analysis.figures.params import Params, Statement
from replay.analysis.figures.selection import Selection, wins_where
from replay.store.facts_schema import GROUP_KINDS

#: The group type names (``GroupKind`` names, lower case) of the ``g_<type>_*`` columns.
GROUP_TYPES: tuple[str, ...] = tuple(k.name.lower() for k in GROUP_KINDS)


def group_sources(sel: Selection) -> Statement:
    """One row over the selected wins that have facts: ``wins``, and per group type ``t``
    ``t_groups`` (groups of that type in the winning readings), ``t_hands`` (wins with at
    least one) and ``t_huxi`` (their 胡息)."""
    p = Params()
    cols = ", ".join(
        f"coalesce(sum(g_{t}_n), 0)::BIGINT AS {t}_groups,"
        f" count(*) FILTER (WHERE g_{t}_n > 0) AS {t}_hands,"
        f" coalesce(sum(g_{t}_huxi), 0)::BIGINT AS {t}_huxi"
        for t in GROUP_TYPES
    )
    return p.statement(
        f"SELECT count(*) AS wins, {cols} FROM hands JOIN facts USING (run, hand_id)"
        f" WHERE {wins_where(sel, p)}"
    )
