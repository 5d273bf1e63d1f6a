"""Cached statistics queries: each runs one statement of :mod:`dashboard.queries.sql`, or of
:mod:`dashboard.queries.summary_sql` when every selected run has its summary tables
(``paohuzi index``; the same numbers without reading the hands).

``sig`` is the store's signature (:func:`replay.store.scan.signature`): part of the
cache key, so a new shard or run is seen at once and unchanged data is never re-read.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import db
from dashboard.queries import sql
from dashboard.queries import summary_sql as ssql
from dashboard.queries.sql import Filters


def _plan(f: Filters) -> ssql.Plan | None:
    """The summary plan of the selection (None: read the hands); ``$PAOHUZI_SUMMARY=0``
    turns the summaries off (benchmarks, comparisons)."""
    import os

    if os.environ.get("PAOHUZI_SUMMARY", "1") == "0":
        return None
    return ssql.plan(db.store_state(), f)


@st.cache_data(show_spinner=False, max_entries=512)
def headline(sig: str, f: Filters) -> pd.DataFrame:
    p = _plan(f)
    return db.query(*(sql.headline(f) if p is None else ssql.headline(p)))


@st.cache_data(show_spinner=False, max_entries=512)
def winning_moments(sig: str, f: Filters) -> pd.DataFrame:
    p = _plan(f)
    return db.query(*(sql.winning_moments(f) if p is None else ssql.winning_moments(p)))


@st.cache_data(show_spinner=False, max_entries=512)
def group_rates(sig: str, f: Filters, key: str) -> pd.DataFrame:
    return group_rates_by(sig, f, (key,))


@st.cache_data(show_spinner=False, max_entries=512)
def group_rates_by(sig: str, f: Filters, keys: tuple[str, ...]) -> pd.DataFrame:
    p = _plan(f)
    return db.query(*(sql.group_rates_by(f, keys) if p is None else ssql.group_rates_by(p, keys)))


@st.cache_data(show_spinner=False, max_entries=512)
def paired(sig: str, f: Filters) -> pd.DataFrame:
    p = _plan(f)
    return db.query(*(sql.paired(f) if p is None else ssql.paired(p)))


@st.cache_data(show_spinner=False, max_entries=512)
def convergence(sig: str, f: Filters, key: str, width: int) -> pd.DataFrame:
    p = _plan(f)
    if p is None or not ssql.convergence_ok(db.store_state(), p, key, width):
        return db.query(*sql.convergence(f, key, width))
    return db.query(*ssql.convergence(p, key, width))


@st.cache_data(show_spinner=False, max_entries=512)
def value_counts(sig: str, f: Filters) -> pd.DataFrame:
    p = _plan(f)
    return db.query(*(sql.value_counts(f) if p is None else ssql.value_counts(p)))


@st.cache_data(show_spinner=False, max_entries=512)
def by_source(sig: str, f: Filters) -> pd.DataFrame:
    p = _plan(f)
    return db.query(*(sql.by_source(f) if p is None else ssql.by_source(p)))


@st.cache_data(show_spinner=False, max_entries=512)
def by_mingtang(sig: str, f: Filters) -> pd.DataFrame:
    p = _plan(f)
    return db.query(*(sql.by_mingtang(f) if p is None else ssql.by_mingtang(p)))


@st.cache_data(show_spinner=False, max_entries=512)
def mingtang_codes(sig: str) -> pd.DataFrame:
    return db.query(*sql.mingtang_codes())


@st.cache_data(show_spinner=False, max_entries=512)
def huang_by(sig: str, f: Filters, key: str) -> pd.DataFrame:
    return huang_by_keys(sig, f, (key,))


@st.cache_data(show_spinner=False, max_entries=512)
def huang_by_keys(sig: str, f: Filters, keys: tuple[str, ...]) -> pd.DataFrame:
    p = _plan(f)
    return db.query(*(sql.huang_by_keys(f, keys) if p is None else ssql.huang_by_keys(p, keys)))


@st.cache_data(show_spinner=False, max_entries=512)
def survival(sig: str, f: Filters, key: str) -> pd.DataFrame:
    p = _plan(f)
    return db.query(*(sql.survival(f, key) if p is None else ssql.survival(p, key)))


@st.cache_data(show_spinner=False, max_entries=512)
def retention(sig: str, f: Filters) -> pd.DataFrame:
    p = _plan(f)
    return db.query(*(sql.retention(f) if p is None else ssql.retention(p)))
