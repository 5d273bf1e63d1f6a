"""Cached queries about single hands: drill-down lists, the group types of the winning
readings (from the per-hand facts), one hand's log."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import db
from dashboard.queries import stats as stats_q
from engine.errors import PaohuziError
from replay.analysis.figures import drill as sql
from replay.analysis.figures import facts as facts_sql
from replay.analysis.figures.selection import Selection
from replay.replayer.hand import HandLog, load_hand, log_from_rows, read_hand_fast
from replay.store.catalog import relation_sql
from replay.store.runs import Store


def _source(sig: str, table: str, spans: list[tuple[str, int, int]]) -> str:
    """A relation over only the ``table`` files of the shards holding the hand ids of
    ``spans`` = [(run, first, last), …]: a query about a few hands opens a few files,
    not every shard's footer (replay.store.catalog.relation_sql)."""
    state = db.state_at(sig)
    files = [p for run, lo, hi in spans for p in state.shard_files(table, run, lo, hi)]
    return relation_sql(table, list(dict.fromkeys(files)))


@st.cache_data(show_spinner=False, max_entries=256)
def hand_count(sig: str, f: Selection, cond: str, value: int | None) -> pd.DataFrame:
    """k of n; from the summary tables when every selected run has them and the condition
    is one they count (:data:`replay.analysis.figures.drill.SUMMARY_CONDITIONS`)."""
    p = stats_q.summary_plan(f) if cond in sql.SUMMARY_CONDITIONS else None
    return db.query(*sql.hand_count(f, p, cond, value))


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


@st.cache_data(show_spinner=False, max_entries=256)
def group_sources(sig: str, f: Selection) -> pd.DataFrame:
    """The group types of the winning readings of every selected win with facts:
    :func:`replay.analysis.figures.facts.group_sources` (one row), from the summaries when
    every selected run has them."""
    return db.query(*facts_sql.group_sources(f, stats_q.summary_plan(f)))


@st.cache_data(show_spinner=False, max_entries=64)
def hand_log(root: str, sig: str, run: str, hand_id: int) -> HandLog:
    """One recorded hand (``replay.replayer.hand.load_hand``), from the run as the state of
    signature ``sig`` checked it (its manifest read once, and bound by its SHA-256); the
    hand's shard is checked before it is read."""
    try:
        r = Store(Path(root)).run_in(db.state_at(sig), run)  # the manifest the scan checked
    except PaohuziError:  # not in that state, or changed since: as the store is now
        return load_hand(root, run, int(hand_id))
    hand, events = read_hand_fast(r, int(hand_id))
    return log_from_rows(r.name, r.rules, hand, events)
