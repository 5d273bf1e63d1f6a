"""Cached statistics queries: each runs one statement of :mod:`dashboard.queries.sql`.

``sig`` is the store's signature (:func:`replay.store.scan.signature`): part of the
cache key, so a new shard or run is seen at once and unchanged data is never re-read.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import db
from dashboard.queries import sql
from dashboard.queries.sql import Filters


@st.cache_data(show_spinner=False, max_entries=512)
def headline(sig: str, f: Filters) -> pd.DataFrame:
    return db.query(*sql.headline(f))


@st.cache_data(show_spinner=False, max_entries=512)
def winning_moments(sig: str, f: Filters) -> pd.DataFrame:
    return db.query(*sql.winning_moments(f))


@st.cache_data(show_spinner=False, max_entries=512)
def group_rates(sig: str, f: Filters, key: str) -> pd.DataFrame:
    return db.query(*sql.group_rates(f, key))


@st.cache_data(show_spinner=False, max_entries=512)
def group_rates_by(sig: str, f: Filters, keys: tuple[str, ...]) -> pd.DataFrame:
    return db.query(*sql.group_rates_by(f, keys))


@st.cache_data(show_spinner=False, max_entries=512)
def paired(sig: str, f: Filters) -> pd.DataFrame:
    return db.query(*sql.paired(f))


@st.cache_data(show_spinner=False, max_entries=512)
def convergence(sig: str, f: Filters, key: str, width: int) -> pd.DataFrame:
    return db.query(*sql.convergence(f, key, width))


@st.cache_data(show_spinner=False, max_entries=512)
def value_counts(sig: str, f: Filters) -> pd.DataFrame:
    return db.query(*sql.value_counts(f))


@st.cache_data(show_spinner=False, max_entries=512)
def by_source(sig: str, f: Filters) -> pd.DataFrame:
    return db.query(*sql.by_source(f))


@st.cache_data(show_spinner=False, max_entries=512)
def by_mingtang(sig: str, f: Filters) -> pd.DataFrame:
    return db.query(*sql.by_mingtang(f))


@st.cache_data(show_spinner=False, max_entries=512)
def mingtang_codes(sig: str) -> pd.DataFrame:
    return db.query(*sql.mingtang_codes())


@st.cache_data(show_spinner=False, max_entries=512)
def huang_by(sig: str, f: Filters, key: str) -> pd.DataFrame:
    return db.query(*sql.huang_by(f, key))


@st.cache_data(show_spinner=False, max_entries=512)
def huang_by_keys(sig: str, f: Filters, keys: tuple[str, ...]) -> pd.DataFrame:
    return db.query(*sql.huang_by_keys(f, keys))


@st.cache_data(show_spinner=False, max_entries=512)
def survival(sig: str, f: Filters, key: str) -> pd.DataFrame:
    return db.query(*sql.survival(f, key))


@st.cache_data(show_spinner=False, max_entries=512)
def retention(sig: str, f: Filters) -> pd.DataFrame:
    return db.query(*sql.retention(f))
