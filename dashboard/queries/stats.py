"""Cached statistics queries: each runs one statement of the statistics layer
(:mod:`replay.analysis.figures`), from the summary tables when every selected run has them
(``paohuzi index``; the same numbers without reading the hands), else from the hands.

``sig`` is the store's signature (:func:`replay.store.scan.signature`): part of the
cache key, so a new shard or run is seen at once and unchanged data is never re-read.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboard import db
from replay.analysis.figures import effects, events, groups, huang, outcomes, values
from replay.analysis.figures.selection import Plan, Selection, plan, summaries_enabled


def summary_plan(f: Selection) -> Plan | None:
    """The summary plan of the selection (None: read the hands); ``$PAOHUZI_SUMMARY=0``
    turns the summaries off (benchmarks, comparisons)."""
    return plan(db.store_state(), f) if summaries_enabled() else None


@st.cache_data(show_spinner=False, max_entries=512)
def headline(sig: str, f: Selection) -> pd.DataFrame:
    return db.query(*outcomes.headline(f, summary_plan(f)))


@st.cache_data(show_spinner=False, max_entries=512)
def winning_moments(sig: str, f: Selection) -> pd.DataFrame:
    return db.query(*outcomes.winning_moments(f, summary_plan(f)))


@st.cache_data(show_spinner=False, max_entries=512)
def group_rates(sig: str, f: Selection, key: str) -> pd.DataFrame:
    return group_rates_by(sig, f, (key,))


@st.cache_data(show_spinner=False, max_entries=512)
def group_rates_by(sig: str, f: Selection, keys: tuple[str, ...]) -> pd.DataFrame:
    return db.query(*groups.group_rates_by(f, summary_plan(f), keys))


@st.cache_data(show_spinner=False, max_entries=512)
def paired(sig: str, f: Selection) -> pd.DataFrame:
    return db.query(*groups.paired(f, summary_plan(f)))


@st.cache_data(show_spinner=False, max_entries=512)
def convergence(sig: str, f: Selection, key: str, width: int) -> pd.DataFrame:
    pl = groups.convergence_plan(db.store_state(), summary_plan(f), key, width)
    return db.query(*groups.convergence(f, pl, key, width))


@st.cache_data(show_spinner=False, max_entries=512)
def value_counts(sig: str, f: Selection) -> pd.DataFrame:
    return db.query(*values.value_counts(f, summary_plan(f)))


@st.cache_data(show_spinner=False, max_entries=512)
def by_source(sig: str, f: Selection) -> pd.DataFrame:
    return db.query(*values.by_source(f, summary_plan(f)))


@st.cache_data(show_spinner=False, max_entries=512)
def by_mingtang(sig: str, f: Selection) -> pd.DataFrame:
    return db.query(*values.by_mingtang(f, summary_plan(f)))


@st.cache_data(show_spinner=False, max_entries=512)
def mingtang_codes(sig: str) -> pd.DataFrame:
    return db.query(*values.mingtang_codes())


@st.cache_data(show_spinner=False, max_entries=512)
def huang_by(sig: str, f: Selection, key: str) -> pd.DataFrame:
    return huang_by_keys(sig, f, (key,))


@st.cache_data(show_spinner=False, max_entries=512)
def huang_by_keys(sig: str, f: Selection, keys: tuple[str, ...]) -> pd.DataFrame:
    return db.query(*huang.huang_by_keys(f, summary_plan(f), keys))


@st.cache_data(show_spinner=False, max_entries=512)
def survival(sig: str, f: Selection, key: str) -> pd.DataFrame:
    return db.query(*huang.survival(f, summary_plan(f), key))


@st.cache_data(show_spinner=False, max_entries=512)
def retention(sig: str, f: Selection) -> pd.DataFrame:
    return db.query(*huang.retention(f, summary_plan(f)))


@st.cache_data(show_spinner=False, max_entries=64)
def run_moments(sig: str, f: Selection, active: int) -> pd.DataFrame:
    """The per-hand figures' cluster sums over the runs of ``f`` (``active`` seats dealt
    cards; each run's deal its own cluster, every seat of the table):
    :func:`replay.analysis.figures.effects.summary_moments` from the summaries where
    :func:`~replay.analysis.figures.effects.moments_plan` allows it (no ``--duplicate`` run,
    no run of imported hands), else :func:`~replay.analysis.figures.effects.run_moments` from
    the hands."""
    return db.query(*effects.moments(db.store_state(), f.runs, active))


@st.cache_data(show_spinner=False, max_entries=64)
def hand_length(sig: str, f: Selection) -> pd.DataFrame:
    """The selection's decisions and draws per hand (cluster sums):
    :func:`replay.analysis.figures.events.hand_length`."""
    return db.query(*events.hand_length(f, summary_plan(f)))


@st.cache_data(show_spinner=False, max_entries=64)
def event_figures(sig: str, run: str, seats: tuple[int, ...], policies: tuple[str, ...]) -> Any:
    """One run's event figures (replay.analysis.event_stats, the numbers of ``paohuzi stats
    --events``) for the sidebar's seats and policies."""
    from replay.analysis.event_stats import summarize_events

    return summarize_events(db.connection(), run, seats, policies, db.store_state())
