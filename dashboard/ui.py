"""Rendering helpers shared by the pages: the sidebar filters, the page header with the
store's notes, error boxes instead of tracebacks, tables and charts with intervals. Paths
are shown relative to the store (:func:`dashboard.db.redact`), never absolute."""

from __future__ import annotations

import contextlib
import io
import math
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import charts, db
from dashboard.services import filters as fsvc
from dashboard.services.paths import store_label
from dashboard.services.sqlguard import RefusedSQL
from replay.analysis.figures.selection import Selection
from replay.store.scan import StoreState

#: The page scripts, relative to app.py; the folder is ``views/``, never ``pages/`` (app.py).
PAGE_FILES = {
    "overview": "views/overview.py",
    "win_rates": "views/win_rates.py",
    "huxi": "views/huxi.py",
    "huang": "views/huangzhuang.py",
    "mingtang": "views/mingtang.py",
    "compare": "views/compare.py",
    "reference": "views/reference.py",
    "replay": "views/replay.py",
    "drilldown": "views/drilldown.py",
    "review": "views/review.py",
    "actions": "views/actions.py",
    "sql": "views/sql.py",
    "play": "views/play.py",
}

_KEYS = ("f_runs", "f_rules", "f_policies", "f_seats")
#: Seconds between two looks at the store by the sidebar's count of runs and hands, so it
#: follows hands recorded (played, simulated) while the page stays open.
COUNT_REFRESH = 5.0


def _clean(key: str, options: Sequence[object]) -> None:
    """Drop chosen values that are no longer offered (a run deleted, a policy gone)."""
    if key in st.session_state:
        st.session_state[key] = [v for v in st.session_state[key] if v in options]


def _picked() -> fsvc.Picked:
    g = st.session_state.get
    return fsvc.Picked(
        tuple(g("f_runs") or ()),
        tuple(g("f_rules") or ()),
        tuple(g("f_policies") or ()),
        tuple(int(s) for s in g("f_seats") or ()),
    )


def _url_selection() -> fsvc.Picked | None:
    qp = st.query_params
    return fsvc.from_params({k: qp.get_all(k) for k in fsvc.URL_KEYS})


def _from_url(state: StoreState) -> None:
    """The sidebar's filters from the URL when it names a selection other than the one this
    session last wrote there (a shared link, a bookmark, a link of another page); the first
    view of a session without one shows the store's main run (:func:`fsvc.default_runs`)."""
    ss = st.session_state
    url = _url_selection()
    if url is None:
        if "_f_url" not in ss:  # a session's first page, no selection asked for
            ss["f_runs"] = list(fsvc.default_runs(state))
            for k in _KEYS[1:]:
                ss[k] = []
            ss["_f_url"] = fsvc.to_params(_picked())
        return
    if fsvc.to_params(url) == ss.get("_f_url"):
        return  # what this session wrote: the widgets hold the choice (maybe a newer one)
    names = {r.name for r in state.usable_runs}
    unknown = [r for r in url.runs if r not in names]
    runs = [r for r in url.runs if r in names]
    ss["f_runs"] = runs if runs or not unknown else list(fsvc.default_runs(state))
    ss["_f_unknown"] = (unknown, list(ss["f_runs"]))  # said while these runs are chosen
    ss["f_rules"], ss["f_policies"] = list(url.rules), list(url.policies)
    ss["f_seats"] = list(url.seats)
    ss["_f_url"] = fsvc.to_params(url)


def _to_url() -> None:
    """The sidebar's filters into the URL (the other query parameters kept)."""
    want = fsvc.to_params(_picked())
    qp = st.query_params
    for key in fsvc.URL_KEYS:
        if key not in want:
            if key in qp:
                del qp[key]
        elif qp.get_all(key) != want[key]:
            qp[key] = want[key]
    st.session_state["_f_url"] = want


def selection_params(extra: dict[str, str] | None = None) -> dict[str, str | list[str]]:
    """``extra`` query parameters with the sidebar's selection, for a link to another page:
    the link then opens the same selection, in this session or another."""
    out: dict[str, str | list[str]] = dict(extra or {})
    out.update(fsvc.to_params(_picked()))
    return out


def param_in(
    param: str,
    key: str,
    options: Sequence[Any] | None = None,
    multi: bool = False,
    cast: Callable[[str], Any] = str,
) -> None:
    """Before the widget ``key`` is made: the URL's ``param`` put into it when the URL holds
    another value than this session last wrote there (:func:`param_out`): a link opened, a
    bookmark. Values not among ``options`` (or that ``cast`` refuses) are left out; ``multi``:
    a list (repeated or comma-separated)."""
    raw = st.query_params.get_all(param)
    if not raw or raw == st.session_state.get(f"_url_{param}"):
        return
    values = []
    for v in raw:
        for x in v.split(",") if multi else [v]:
            try:
                got = cast(x.strip())
            except ValueError:
                continue
            if options is None or got in options:
                values.append(got)
    if multi:
        st.session_state[key] = values
    elif values:
        st.session_state[key] = values[0]
    st.session_state[f"_url_{param}"] = raw


def param_out(param: str, value: Any) -> None:
    """The widget's ``value`` into the URL's ``param`` (a list as repeated values; an empty
    list or None removes it), the other parameters kept."""
    if value is None:
        want: list[str] = []
    elif isinstance(value, (list, tuple)):
        want = [str(v) for v in value]
    else:
        want = [str(value)]
    qp = st.query_params
    if not want:
        if param in qp:
            del qp[param]
    elif qp.get_all(param) != want:
        qp[param] = want if len(want) > 1 else want[0]
    st.session_state[f"_url_{param}"] = want


def sidebar(state: StoreState) -> None:
    """The filters every page applies, in the sidebar (kept across pages, and in the URL)."""
    with st.sidebar:
        st.caption(f"Store: `{store_label(state.root)}`")
        if not state.usable_runs:
            return
        _from_url(state)
        unknown, chosen = st.session_state.get("_f_unknown") or ([], None)
        if unknown and chosen == st.session_state.get("f_runs"):
            st.warning(f"The link names runs not in the store: {', '.join(unknown)}.")
        ch = fsvc.choices(state)
        _clean("f_runs", ch.runs)
        st.multiselect(
            "Runs",
            ch.runs,
            key="f_runs",
            placeholder="all runs",
            help="Empty: all runs. The first view shows the main run (the most hands) and the"
            " runs like it: one rule set.",
        )
        _clean("f_rules", ch.rules)
        st.multiselect("Rules", ch.rules, key="f_rules", placeholder="all rules presets")
        ch = fsvc.choices(state, st.session_state.get("f_runs") or ())
        _clean("f_policies", ch.policies)
        st.multiselect("Policy", ch.policies, key="f_policies", placeholder="all policies")
        _clean("f_seats", ch.seats)
        st.multiselect(
            "Seat",
            ch.seats,
            key="f_seats",
            placeholder="all seats",
            format_func=lambda s: f"seat {s}",
        )
        _to_url()
        _store_line(state.signature)
        st.caption(
            "Seat and policy narrow seat-level rates; 胡息/score/名堂 count the wins of the"
            " chosen seats and policies; 荒庄 counts hands in which they played."
        )


@st.fragment(run_every=COUNT_REFRESH)
def _store_line(drawn: str) -> None:
    """The selection and the store's runs and hands, looked at again every
    :data:`COUNT_REFRESH` seconds (a fragment: the page itself is not redrawn); when the store
    changed since the page was drawn (``drawn``: its signature), it says so, with a button
    that redraws the page on the store as it is now."""
    try:
        now = db.store_state()
    except OSError:
        return
    f = current_filters(now)
    st.caption(fsvc.describe(f, now))
    usable = now.usable_runs
    st.caption(
        f"In the store: {len(usable)} run{'s' if len(usable) != 1 else ''},"
        f" {sum(r.hands for r in usable):,} hands"
    )
    if now.signature != drawn:
        st.caption("The store changed since this page was drawn.")
        if st.button("Show the store as it is now", key="f_refresh", icon=":material/refresh:"):
            st.rerun(scope="app")


def keep(*keys: str) -> None:
    """The page's widgets ``keys`` keep their values when the user leaves the page and comes
    back: Streamlit drops a widget's value in a run that does not show it, so a copy is
    kept under another key and put back. Call before the widgets are made."""
    for k in keys:
        copy = f"_kept_{k}"
        if k in st.session_state:
            st.session_state[copy] = st.session_state[k]
        elif copy in st.session_state:
            st.session_state[k] = st.session_state[copy]


def current_filters(state: StoreState) -> Selection:
    g = st.session_state.get
    return fsvc.resolve(
        state,
        g("f_runs") or (),
        g("f_rules") or (),
        g("f_policies") or (),
        g("f_seats") or (),
    )


def show_messages(state: StoreState) -> None:
    """The store's notes, its files named relative to it (:func:`dashboard.db.redact`)."""
    for level, text in state.messages():
        {"error": st.error, "warning": st.warning}.get(level, st.info)(db.redact(text))
    if state.usable_runs:
        note = db.catalog_note(state)
        if note is not None:
            st.info(db.redact(note))


def start(
    title: str, caption: str | None = None, need_runs: bool = True, pools: bool = True
) -> tuple[StoreState, Selection]:
    """Title, the store's notes, and the filter; stops the page (with a message, not a
    traceback) when there is nothing to show. ``pools``: the page pools the selection's
    runs into one figure, so a selection of several rule sets is said to be one (a page
    with a row per run or per rule set passes False)."""
    st.title(title)
    if caption:
        st.caption(caption)
    try:
        state = db.store_state()
    except OSError as e:
        st.error(db.redact(f"Cannot read the store: {e}"))
        st.stop()
    show_messages(state)
    if need_runs and not state.usable_runs:
        st.stop()
    f = current_filters(state)
    if need_runs and not f.runs:
        st.warning("No run matches the filters in the sidebar.")
        st.stop()
    if pools:
        note = fsvc.pooled_note(fsvc.rule_groups(state, f))
        if note:
            st.info(note, icon=":material/layers:")
    return state, f


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """Show a store that cannot be read (a corrupt shard, a file removed under us) as one
    clear line and stop the page."""
    try:
        yield
    except db.StoreReadError as e:
        st.error(f"{e}. Run `paohuzi verify` on the store, or leave that run out in the sidebar.")
        st.stop()
    except RefusedSQL as e:  # pragma: no cover - SQL page handles it itself
        st.error(str(e))
        st.stop()


#: The main column's width in pixels at a 1,024-pixel window with the sidebar open (app.py
#: sets the sidebar's width): a grid's columns are fitted into it (:func:`fit_columns`).
GRID_BUDGET = 590
#: A grid's row height when a fitted column wraps its text (Streamlit wraps a grid's cells
#: only in rows taller than 4 rem): three lines.
WRAP_ROW_HEIGHT = 66


def table(
    df: pd.DataFrame,
    name: str,
    hide: Sequence[str] = ("p", "lo", "hi"),
    *,
    grid: bool = False,
    formats: dict[str, str] | None = None,
    **kw: Any,
) -> Any:
    """A table without the chart-only columns ``p``, ``lo``, ``hi`` (``hide``), and under it
    its download buttons (:func:`downloads`: the rows and columns shown). ``name``: the
    file's name (unique on the page).

    A summary table is an HTML table (``st.table``) whose cells wrap, so it fits the page at
    any width (``formats``: a column's Python format, e.g. ``"{:.1%}"``); one to select rows
    of (``kw``: ``on_select`` … of ``st.dataframe``) or with many rows (``grid``: a hand
    list, a query's result) is a scrolling grid (``st.dataframe``) with its columns fitted
    (:func:`fit_columns`). Returns what ``st.dataframe`` returns (its selection), else None."""
    cols = [c for c in df.columns if c not in hide]
    shown = df[cols]
    if grid or kw:
        budget = GRID_BUDGET - (40 if kw.get("on_select") else 0)  # the rows' checkboxes
        config, wrap = fit_columns(shown, kw.pop("column_config", None), budget)
        if wrap:
            kw.setdefault("row_height", WRAP_ROW_HEIGHT)
            if "height" in kw:  # a height for every row: the rows are taller now
                kw["height"] = WRAP_ROW_HEIGHT * len(shown) + 40
        out = st.dataframe(shown, hide_index=True, width="stretch", column_config=config, **kw)
    else:
        st.table(_styled(shown, formats or {}))
        out = None
    downloads(shown, name)
    return out


def _cell(v: Any) -> str:
    """A cell as a summary table shows it: whole numbers with thousands separators, other
    numbers to 2 decimals (4 significant digits below 1), a missing one as ``–``, and no line
    break between a number and its ``%`` or ``pp``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "✓" if v else ""
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if x.is_integer():
            return f"{x:,.0f}"
        return f"{x:,.2f}" if abs(x) >= 1 else f"{x:.4g}"
    return str(v).replace(" %", "\u00a0%").replace(" pp", "\u00a0pp")


def _styled(df: pd.DataFrame, formats: dict[str, str]) -> Any:
    """``df`` for ``st.table``: its cells as :func:`_cell` writes them (or by ``formats``),
    numbers aligned right, no index."""
    sty = df.style.format(_cell)
    for col, fmt in formats.items():
        if col in df.columns:
            sty = sty.format(lambda v, f=fmt: "–" if v is None or v != v else f.format(v),
                             subset=[col])  # fmt: skip
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c].dtype)
               and not pd.api.types.is_bool_dtype(df[c].dtype)]  # fmt: skip
    if numeric:
        sty = sty.set_properties(subset=numeric, **{"text-align": "right"})
    return sty.hide(axis="index")


def _text_px(text: str) -> float:
    """About how wide ``text`` is drawn in a grid's cell (14 px font): wide (CJK)
    characters 14 px, others 7.5."""
    return sum(14.0 if unicodedata.east_asian_width(ch) in "WF" else 7.5 for ch in text)


def fit_columns(
    df: pd.DataFrame, config: dict[str, Any] | None = None, budget: int = GRID_BUDGET
) -> tuple[dict[str, Any], bool]:
    """Column widths for a grid of ``df`` that fit ``budget`` pixels (a grid draws each
    column as wide as its longest cell, and scrolls sideways past its container): when the
    columns' natural widths add up to more, the wide ones are narrowed (none below 56 px or
    its natural width) and their text wraps (the second value: the rows must be taller).
    ``config``: ``column_config`` to keep, the widths added to it.

    >>> df = pd.DataFrame({"a": [1, 2], "b": ["x" * 200, "y"]})
    >>> cfg, wrap = fit_columns(df, budget=300)
    >>> wrap, cfg["a"]["width"] < 60, 290 <= cfg["a"]["width"] + cfg["b"]["width"] <= 300
    (True, True, True)
    >>> fit_columns(pd.DataFrame({"a": [1]}))
    ({}, False)
    """
    out: dict[str, Any] = dict(config or {})
    natural: dict[str, float] = {}
    for c in df.columns:
        cells = [_text_px(_cell(v)) for v in df[c].head(300)]
        natural[str(c)] = min(400.0, max([_text_px(str(c)) + 36, *(x + 20 for x in cells)]))
    total = sum(natural.values())
    if total <= budget:
        return out, False
    floor = {c: min(w, 56.0) for c, w in natural.items()}
    spare = sum(natural[c] - floor[c] for c in natural)
    factor = max(0.0, (budget - sum(floor.values())) / spare) if spare else 0.0
    for c, w in natural.items():
        width = int(floor[c] + (w - floor[c]) * factor)
        given = out.get(c)
        out[c] = {**(given if isinstance(given, dict) else {}), "width": max(width, 40)}
    return out, True


def _parquet(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    try:
        df.to_parquet(buf, index=False)
    except (ValueError, TypeError):  # a column of mixed types (pyarrow's ArrowInvalid …)
        buf = io.BytesIO()
        mixed = {c: df[c].astype(str) for c in df.columns if df[c].dtype == object}
        df.assign(**mixed).to_parquet(buf, index=False)
    return buf.getvalue()


def downloads(df: pd.DataFrame, name: str) -> None:
    """Download buttons for the table ``df``, exactly as the page shows it: CSV (UTF-8 with a
    byte-order mark, which spreadsheets need for the Chinese) and Parquet, each made when
    clicked; the files are ``paohuzi-NAME.csv`` / ``.parquet``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "table"
    frame = df.reset_index(drop=True)
    with st.container(horizontal=True, gap="small", key=f"dl_{slug}"):
        st.download_button(
            "CSV",
            lambda: frame.to_csv(index=False).encode("utf-8-sig"),
            file_name=f"paohuzi-{slug}.csv",
            mime="text/csv",
            key=f"dl_{slug}_csv",
            on_click="ignore",
            type="tertiary",
            icon=":material/download:",
            help=f"These {len(frame):,} rows as CSV",
        )
        st.download_button(
            "Parquet",
            lambda: _parquet(frame),
            file_name=f"paohuzi-{slug}.parquet",
            mime="application/vnd.apache.parquet",
            key=f"dl_{slug}_parquet",
            on_click="ignore",
            type="tertiary",
            icon=":material/download:",
            help=f"These {len(frame):,} rows as Parquet",
        )


def chart(data: pd.DataFrame, spec: charts.Spec, **kw: Any) -> Any:
    """Draw a chart of :mod:`dashboard.charts` on ``data``, as wide as its column; ``kw``:
    ``key``, ``on_select`` … of ``st.vega_lite_chart`` (whose value it returns)."""
    return st.vega_lite_chart(data, spec, width="stretch", **kw)


def rate_chart(
    df: pd.DataFrame, category: str, title: str, pct: bool = True, sort: str | None = None
) -> None:
    """Horizontal bars of ``p`` with ``lo``–``hi`` error bars, one per ``category``
    (:func:`dashboard.charts.rate_bars`)."""
    data = df[[category, "p", "lo", "hi"]].rename(columns={category: "group"})
    chart(data, charts.rate_bars("group", title, pct, sort))


def drill_link(label: str, cond: str, value: int | None = None) -> None:
    qp = {"cond": cond} if value is None else {"cond": cond, "value": str(value)}
    st.page_link(
        PAGE_FILES["drilldown"],
        label=label,
        icon=":material/search:",
        query_params=selection_params(qp),
    )


def card_table(view: dict[str, Any]) -> None:
    """The card table of a view (``replay.replayer.views.state_view``): the stock, 亮张 and
    the card on offer, then per seat its hand (hidden ones as backs), melds with their 胡息,
    dead cards and discards — the Replay and Play pages draw the same table."""
    from dashboard.services import replay as rsvc

    st.html(f'<div class="phz-table">{rsvc.table_html(view)}</div>')
    blocks = rsvc.seat_blocks(view)
    cols = st.columns(len(blocks))
    for col, blk in zip(cols, blocks):
        with col.container(border=True):
            st.markdown(f"**{blk['title']}**")
            if blk["sits_out"]:
                st.caption("sits out this hand (坐醒)")
                continue
            st.caption(f"hand ({blk['hand_count']})")
            st.html(f'<div class="phz-hand">{blk["hand"]}</div>')
            st.caption(f"melds · {blk['huxi']} 胡息")
            st.html(f'<div class="phz-melds">{blk["melds"]}</div>')
            st.caption("right (dead cards)")
            st.html(blk["right"])
            st.caption("discards")
            st.html(blk["discards"])


def hand_result(view: dict[str, Any]) -> None:
    """The end of a hand (nothing before it): who won with what, the 胡 card, 胡息, 等, 番,
    score and stock left, the decomposition, the 名堂 and the settlement."""
    from dashboard.services import replay as rsvc

    out = rsvc.outcome_frames(view)
    if not out:
        return
    st.subheader("Result")
    st.markdown(f"**{out['summary']}**")
    if out["card_html"]:
        st.html(f"hu card {out['card_html']}")
    facts = out["facts"]
    m = st.columns(5)
    for col, key, lab in zip(
        m,
        ("huxi", "deng", "fan", "score", "stock_left"),
        ("胡息", "等", "番", "score", "stock left"),
    ):
        if facts.get(key) is not None:
            col.metric(lab, str(facts[key]))
    left, mid, right = st.columns(3)
    with left:
        st.caption("decomposition")
        if out["decomposition"].empty:
            st.write("–")
        else:
            table(out["decomposition"], "hand-decomposition", hide=())
    with mid:
        st.caption("名堂")
        if out["mingtang"].empty:
            st.write("平胡 (no 名堂)" if facts.get("huxi") is not None else "–")
        else:
            table(out["mingtang"], "hand-mingtang", hide=())
    with right:
        st.caption("settlement")
        table(out["settlement"], "hand-settlement", hide=())
