"""Cached queries about single hands: drill-down lists, samples to replay, one hand's log."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import db
from dashboard.queries import sql
from dashboard.queries.sql import Filters
from replay.replayer import HandLog, load_hand

_CACHE = {"show_spinner": False, "max_entries": 256}


@st.cache_data(**_CACHE)
def hand_count(sig: str, f: Filters, cond: str, value: int | None) -> pd.DataFrame:
    return db.query(*sql.hand_count(f, cond, value))


@st.cache_data(**_CACHE)
def hand_list(
    sig: str, f: Filters, cond: str, value: int | None, limit: int, with_deck: bool = False
) -> pd.DataFrame:
    return db.query(*sql.hand_list(f, cond, value, limit, with_deck))


def _ranges(rows: pd.DataFrame) -> list[tuple[str, int, int]]:
    if rows.empty:
        return []
    g = rows.groupby("run")["hand_id"].agg(["min", "max"])
    return [(str(run), int(r["min"]), int(r["max"])) for run, r in g.iterrows()]


@st.cache_data(**_CACHE)
def events_of(sig: str, rows: pd.DataFrame) -> pd.DataFrame:
    """The decisions of the hands in ``rows`` (columns ``run``, ``hand_id``)."""
    return db.query(*sql.events_for(_ranges(rows)))


@st.cache_data(**_CACHE)
def win_sample(sig: str, f: Filters, per_run: int, below: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A sample of winning hands with their decks, and their decisions."""
    rows = db.query(*sql.win_sample(f, per_run, below))
    return rows, db.query(*sql.events_for(_ranges(rows)))


@st.cache_data(show_spinner=False, max_entries=64)
def hand_log(root: str, sig: str, run: str, hand_id: int) -> HandLog:
    """One recorded hand (``replay.replayer.load_hand``: the manifest's shard ranges find it
    without a scan)."""
    return load_hand(root, run, int(hand_id))
