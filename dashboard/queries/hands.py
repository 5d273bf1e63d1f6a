"""Cached queries about single hands: drill-down lists, samples to replay, one hand's log.

Replaying recorded hands (``replay.replayer.hand``) is reading them too, and costs like a query, so
the replays behind the 胡息 group table and the 破跑胡 check are cached here as well.
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from dashboard import db
from dashboard.queries import stats as stats_q
from dashboard.services import drill, huxi
from engine.rules import RuleSet
from replay.analysis.figures import drill as sql
from replay.analysis.figures.selection import Selection
from replay.analysis.figures.values import win_sample as win_sample_sql
from replay.replayer.hand import HandLog, load_hand
from replay.store.catalog import relation_sql


def _source(sig: str, table: str, spans: list[tuple[str, int, int]]) -> str:
    """A relation over only the ``table`` files of the shards holding the hand ids of
    ``spans`` = [(run, first, last), …]: a query about a few hands opens a few files,
    not every shard's footer (replay.store.catalog.relation_sql)."""
    state = db.state_at(sig)
    files = [p for run, lo, hi in spans for p in state.shard_files(table, run, lo, hi)]
    return relation_sql(table, list(dict.fromkeys(files)))


def _below(f: Selection, bound: int) -> list[tuple[str, int, int]]:
    """Hand ids ``0 … bound − 1`` of each selected run."""
    return [(run, 0, int(bound) - 1) for run in sorted(f.runs)]


@st.cache_data(show_spinner=False, max_entries=256)
def hand_count(sig: str, f: Selection, cond: str, value: int | None) -> pd.DataFrame:
    """k of n; from the summary tables when every selected run has them and the condition
    is one they count (:data:`replay.analysis.figures.drill.SUMMARY_CONDITIONS`)."""
    p = stats_q.summary_plan(f) if cond in sql.SUMMARY_CONDITIONS else None
    if p is not None or cond not in sql.SCAN_BOUND:
        return db.query(*sql.hand_count(f, p, cond, value))
    spans = _below(f, sql.SCAN_BOUND[cond])
    return db.query(
        *sql.hand_count(
            f, None, cond, value, _source(sig, "hands", spans), _source(sig, "events", spans)
        )
    )


def shard_ranges(sig: str, run: str) -> list[tuple[int, int]]:
    """The hand ids of each listed shard of a run, in order (from the store's scan)."""
    info = db.state_at(sig).run(run)
    return list(info.ranges) if info is not None and info.usable else []


@st.cache_data(show_spinner=False, max_entries=256)
def hand_list(
    sig: str, f: Selection, cond: str, value: int | None, limit: int, with_deck: bool = False
) -> pd.DataFrame:
    """The first ``limit`` matching hands by run and hand id, read run by run and a few
    shards at a time (1, 2, 4, … shards, each query over only their files): a common
    condition reads the first shard only."""
    if cond in sql.SCAN_BOUND:
        spans = _below(f, sql.SCAN_BOUND[cond])
        return db.query(
            *sql.hand_list(
                f,
                cond,
                value,
                limit,
                with_deck,
                _source(sig, "hands", spans),
                _source(sig, "events", spans),
            )
        )
    parts: list[pd.DataFrame] = []
    left = int(limit)
    for run in sorted(f.runs):
        ranges = shard_ranges(sig, run)
        one = dataclasses.replace(f, runs=(run,))
        i, step = 0, 1
        while i < len(ranges) and left > 0:
            lo, hi = ranges[i][0], ranges[min(len(ranges), i + step) - 1][1]
            source = _source(sig, "hands", [(run, lo, hi)])
            got = db.query(*sql.hand_list(one, cond, value, left, with_deck, source, span=(lo, hi)))
            if len(got):
                parts.append(got)
                left -= len(got)
            i += step
            step *= 2
        if left <= 0:
            break
    if not parts:
        return db.query(*sql.hand_list(f, cond, value, 0, with_deck, _source(sig, "hands", [])))
    return pd.concat(parts, ignore_index=True)


def _ranges(rows: pd.DataFrame) -> list[tuple[str, int, int]]:
    if rows.empty:
        return []
    g = rows.groupby("run")["hand_id"].agg(["min", "max"])
    return [(str(run), int(r["min"]), int(r["max"])) for run, r in g.iterrows()]


def _events(sig: str, rows: pd.DataFrame) -> pd.DataFrame:
    """The decisions of ``rows``' hands, read from their shards only."""
    spans = _ranges(rows)
    return db.query(*sql.events_for(spans, _source(sig, "events", spans)))


@st.cache_data(show_spinner=False, max_entries=256)
def win_sample(
    sig: str, f: Selection, per_run: int, below: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A sample of winning hands with their decks, and their decisions."""
    rows = db.query(*win_sample_sql(f, per_run, below, _source(sig, "hands", _below(f, below))))
    return rows, _events(sig, rows)


@st.cache_data(show_spinner=False, max_entries=256)
def group_sources(
    sig: str, f: Selection, per_run: int, below: int, rules: tuple[tuple[str, RuleSet], ...]
) -> tuple[pd.DataFrame, int, int]:
    """The group types of the winning readings of a sample of wins (replayed once, then
    cached): :func:`dashboard.services.huxi.group_sources`."""
    rows, events = win_sample(sig, f, per_run, below)
    return huxi.group_sources(huxi.sample_logs(rows, events, dict(rules)))


@st.cache_data(show_spinner=False, max_entries=256)
def popao(
    sig: str, f: Selection, limit: int, rules: tuple[tuple[str, RuleSet], ...]
) -> tuple[pd.DataFrame, list[tuple[str, int, bool | None]]]:
    """The first ``limit`` 破跑胡 candidates (a 跑 of the hu card was possible) and, for
    each, whether the replay shows the free hu (option F): :func:`drill.popao_confirmed`."""
    spans = _below(f, sql.SCAN_BOUND["popao"])
    rows = db.query(
        *sql.hand_list(
            f,
            "popao",
            None,
            limit,
            True,
            _source(sig, "hands", spans),
            _source(sig, "events", spans),
        )
    )
    events = _events(sig, rows)
    return rows, drill.popao_confirmed(huxi.sample_logs(rows, events, dict(rules)))


@st.cache_data(show_spinner=False, max_entries=64)
def hand_log(root: str, sig: str, run: str, hand_id: int) -> HandLog:
    """One recorded hand (``replay.replayer.hand.load_hand``: the manifest's shard ranges find it
    without a scan)."""
    return load_hand(root, run, int(hand_id))
