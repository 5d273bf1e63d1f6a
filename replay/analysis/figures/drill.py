"""Drill-down: how many hands match a condition (from the hands, or from the summary tables
for the conditions they count) and which ones (the hands, a few shards at a time), with their
decisions.

>>> sql, params = hand_count(Selection(runs=("a",)), None, "huxi_ge", 30)
>>> sorted(params.items())
[('run_0', 'a'), ('value', 30)]
"""

from __future__ import annotations

from collections.abc import Sequence

from replay.analysis.figures import events as EV
from replay.analysis.figures.params import Params, Statement
from replay.analysis.figures.selection import (
    AUTO,
    HAND_BIT,
    HUANG,
    MASK,
    WIN_BIT,
    WINNER_BIT,
    Plan,
    Selection,
    hands_where,
    sel_cte,
    wins_where,
)

#: Drill-down conditions on ``hands h`` joined with ``runs r``: (SQL with at most one
#: ``$value``, whether it takes a value, whether it is about winning hands).
CONDITIONS: dict[str, tuple[str, bool, bool]] = {
    "huxi_ge": ("h.huxi >= $value", True, True),
    "huxi_eq": ("h.huxi = $value", True, True),
    "deng_eq": ("h.deng = $value", True, True),
    "fan_eq": ("h.fan = $value", True, True),
    "score_ge": ("h.score >= $value", True, True),
    "score_eq": ("h.score = $value", True, True),
    "mingtang": ("(h.mingtang >> $value) & 1 = 1", True, True),
    "pinghu": ("h.mingtang = 0", False, True),
    "source": ("coalesce(h.source, 255) = $value", True, True),
    "zimo": ("h.zimo", False, True),
    "dealer_win": ("h.winner = h.dealer", False, True),
    "tianhu_auto": (f"h.outcome = {AUTO}", False, True),
    "huang": (f"h.outcome = {HUANG}", False, False),
    "huang_retained": (
        f"h.outcome = {HUANG} AND h.huang_streak + 1 < r.huangzhuang_rotate",
        False,
        False,
    ),
    "stock_left": ("h.stock_left = $value", True, False),
    "retained_dealer": ("h.huang_streak > 0", False, False),
    # 破跑胡, exactly: the per-hand facts (docs/LOG_FORMAT.md §12) of the runs that have them
    "popao": (
        "EXISTS (SELECT 1 FROM facts f WHERE f.run = h.run AND f.hand_id = h.hand_id AND f.popao)",
        False,
        True,
    ),
}

# What players do (replay.analysis.figures.events): hands in which it happened.
_EV = "EXISTS (SELECT 1 FROM events e WHERE e.run = h.run AND e.hand_id = h.hand_id AND "
CONDITIONS.update(
    {
        "chouhu": (_EV + f"{EV.declined('e', EV.HU)})", False, False),  # a 胡 declined
        "renpeng": (_EV + f"{EV.declined('e', EV.PENG)})", False, False),  # a 碰 declined
        "bakuai": (  # a seat's second 跑 or 提
            _EV + f"e.kind IN {EV.FOUR_KINDS} GROUP BY e.seat HAVING count(*) >= 2)",
            False,
            False,
        ),
    }
)
#: The conditions about one event of a hand: the Replay page opens such a hand at the step
#: where it happened (``at=COND``, :func:`event_step`).
EVENT_CONDITIONS = ("chouhu", "renpeng", "bakuai")

#: Drill-down conditions the summary tables count exactly: (kind, condition on its rows
#: ``x``, with at most one ``$value``). ``popao``: the ``ev_facts`` rows of the selection's
#: seat mask, ``k`` of their wins (the summaries hold every hand's facts).
SUMMARY_CONDITIONS: dict[str, tuple[str, str]] = {
    "huxi_ge": ("values", "x.metric = 'huxi' AND x.v >= $value"),
    "huxi_eq": ("values", "x.metric = 'huxi' AND x.v = $value"),
    "deng_eq": ("values", "x.metric = 'deng' AND x.v = $value"),
    "fan_eq": ("values", "x.metric = 'fan' AND x.v = $value"),
    "score_ge": ("values", "x.metric = 'score' AND x.v >= $value"),
    "score_eq": ("values", "x.metric = 'score' AND x.v = $value"),
    "mingtang": ("mingtang", "x.bit = $value"),
    "pinghu": ("mingtang", "x.bit = -1"),
    "source": ("hands", "coalesce(x.source, 255) = $value"),
    "zimo": ("hands", "x.zimo"),
    "dealer_win": ("hands", "x.winner = x.dealer"),
    "tianhu_auto": ("hands", f"x.outcome = {AUTO}"),
    "huang": ("hands", f"x.outcome = {HUANG}"),
    "huang_retained": (
        "hands",
        f"x.outcome = {HUANG} AND x.streak + 1 < (SELECT huangzhuang_rotate FROM runs r"
        " WHERE r.run = x.run)",
    ),
    "stock_left": ("stock", "x.stock = $value"),
    "retained_dealer": ("hands", "x.streak > 0"),
    "popao": ("ev_facts", "x.what = 'wins'"),
}

HAND_COLUMNS = (
    "run, h.hand_id, h.dealer, h.huang_streak, h.outcome, h.winner, h.source, h.hu_card,"
    " h.huxi, h.deng, h.fan, h.score, h.mingtang, h.zimo, h.stock_left, h.n_events"
)

#: Conditions read from the per-hand facts: counted among the hands that have facts (the runs
#: recorded before them have none until ``paohuzi index``).
FACT_CONDITIONS = ("popao",)


def _value(p: Params, cond: str, value: int | None) -> None:
    if CONDITIONS[cond][1]:
        if value is None:
            raise ValueError(f"condition {cond!r} needs a value")
        p.values["value"] = int(value)


def _base(sel: Selection, p: Params, cond: str) -> str:
    """The hands a condition is counted among: selected wins or hands (of the runs with facts
    for :data:`FACT_CONDITIONS`)."""
    _, _, about_wins = CONDITIONS[cond]
    where = wins_where(sel, p) if about_wins else hands_where(sel, p)
    if cond in FACT_CONDITIONS:
        return f"{where} AND run IN (SELECT DISTINCT run FROM facts)"
    return where


def _condition(
    sel: Selection, p: Params, cond: str, value: int | None, source: str, events: str
) -> str:
    text = CONDITIONS[cond][0]
    text = text.replace("FROM events e", f"FROM {events} e")  # the event conditions
    _value(p, cond, value)
    return f"FROM {source} h JOIN runs r USING (run) WHERE {_base(sel, p, cond)} AND {text}"


def hand_count(
    sel: Selection,
    pl: Plan | None,
    cond: str,
    value: int | None,
    source: str = "hands",
    events: str = "events",
) -> Statement:
    """How many hands match (``k``), out of how many (``n``: the selected hands, or the
    selected wins; for :data:`FACT_CONDITIONS`, those of the runs with facts).
    ``source``: the hands relation (the catalog's view, or one over the shards that can hold
    them), ``events`` likewise for a condition that reads the decisions. ``pl`` (a summary
    plan) only for the conditions of :data:`SUMMARY_CONDITIONS`."""
    p = Params()
    if pl is not None:
        return _hand_count_summary(pl, p, cond, value)
    src = _condition(sel, p, cond, value, source, events)
    return p.statement(
        f"SELECT (SELECT count(*) {src}) AS k,"
        f" (SELECT count(*) FROM {source} WHERE {_base(sel, p, cond)}) AS n"
    )


def _hand_count_summary(pl: Plan, p: Params, cond: str, value: int | None) -> Statement:
    kind, text = SUMMARY_CONDITIONS[cond]
    _, _, about_wins = CONDITIONS[cond]
    cte = sel_cte(pl, p)
    if kind == "ev_facts":  # per policy of the mask's seats: n wins, k by 破跑胡
        src = f"FROM summary_ev_facts x JOIN sel USING (run) WHERE {MASK} AND {text}"
        return p.statement(
            f"WITH {cte} SELECT (SELECT coalesce(sum(x.k), 0) {src}) AS k,"
            f" (SELECT coalesce(sum(x.n), 0) {src}) AS n"
        )
    if about_wins:
        # every win once: the 'hands' rows (the other kinds count a win once per value/bit)
        base = f"FROM summary_hands x JOIN sel USING (run) WHERE {WIN_BIT}"
        bit = WIN_BIT if kind == "hands" else WINNER_BIT
        src = f"FROM summary_{kind} x JOIN sel USING (run) WHERE {bit}"
    else:
        base = f"FROM summary_hands x JOIN sel USING (run) WHERE {HAND_BIT}"
        src = f"FROM summary_{kind} x JOIN sel USING (run) WHERE {HAND_BIT}"
    _value(p, cond, value)
    return p.statement(
        f"WITH {cte} SELECT (SELECT coalesce(sum(x.n), 0) {src} AND {text}) AS k,"
        f" (SELECT coalesce(sum(x.n), 0) {base}) AS n"
    )


def hand_list(
    sel: Selection,
    cond: str,
    value: int | None,
    limit: int,
    with_deck: bool = False,
    source: str = "hands",
    events: str = "events",
    span: tuple[int, int] | None = None,
) -> Statement:
    """The first ``limit`` matching hands (by run and hand id); with their decks, to replay.
    ``span``: only hand ids ``lo … hi`` (a few shards of one run; ``source`` then names only
    their files, so no other file is opened)."""
    p = Params()
    src = _condition(sel, p, cond, value, source, events)
    if span is not None:
        lo, hi = span
        src += f" AND h.hand_id BETWEEN {p.bind(int(lo), 'lo')} AND {p.bind(int(hi), 'hi')}"
    cols = HAND_COLUMNS + (", h.deck" if with_deck else "")
    return p.statement(
        f"SELECT {cols} {src} ORDER BY run, h.hand_id LIMIT {p.bind(int(limit), 'limit')}"
    )


def events_for(ranges: Sequence[tuple[str, int, int]], source: str = "events") -> Statement:
    """The decisions of the hands in ``(run, first, last)`` ranges, one list per hand
    (``source``: the events relation, best one over only the shards of those ranges)."""
    if not ranges:
        return (
            "SELECT NULL::VARCHAR AS run, NULL AS hand_id, [] AS seat, [] AS action WHERE false",
            {},
        )
    p = Params()
    cond = " OR ".join(
        f"(run = {p.bind(run, f'run{i}')} AND hand_id BETWEEN {p.bind(int(lo), f'lo{i}')}"
        f" AND {p.bind(int(hi), f'hi{i}')})"
        for i, (run, lo, hi) in enumerate(ranges)
    )
    return p.statement(
        "SELECT run, hand_id, list(seat ORDER BY seq) AS seat, list(action ORDER BY seq)"
        f" AS action FROM {source} WHERE {cond} GROUP BY run, hand_id"
    )
