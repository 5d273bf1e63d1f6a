"""Rendering helpers shared by the pages: the sidebar filters, the page header with the
store's notes, error boxes instead of tracebacks, tables and charts with intervals. Paths
are shown relative to the store (:func:`dashboard.db.redact`), never absolute."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

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


def _clean(key: str, options: Sequence[object]) -> None:
    """Drop chosen values that are no longer offered (a run deleted, a policy gone)."""
    if key in st.session_state:
        st.session_state[key] = [v for v in st.session_state[key] if v in options]


def sidebar(state: StoreState) -> None:
    """The filters every page applies, in the sidebar (kept across pages)."""
    with st.sidebar:
        st.caption(f"Store: `{store_label(state.root)}`")
        if not state.usable_runs:
            return
        ch = fsvc.choices(state)
        _clean("f_runs", ch.runs)
        st.multiselect("Runs", ch.runs, key="f_runs", placeholder="all runs")
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
        f = current_filters(state)
        st.caption(fsvc.describe(f, state))
        st.caption(
            "Seat and policy narrow seat-level rates; 胡息/score/名堂 count the wins of the"
            " chosen seats and policies; 荒庄 counts hands in which they played."
        )


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
    title: str, caption: str | None = None, need_runs: bool = True
) -> tuple[StoreState, Selection]:
    """Title, the store's notes, and the filter; stops the page (with a message, not a
    traceback) when there is nothing to show."""
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


def table(df: pd.DataFrame, hide: Sequence[str] = ("p", "lo", "hi")) -> None:
    """A table without the chart-only columns ``p``, ``lo``, ``hi``."""
    cols = [c for c in df.columns if c not in hide]
    st.dataframe(df[cols], hide_index=True, width="stretch")


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
    st.page_link(PAGE_FILES["drilldown"], label=label, icon=":material/search:", query_params=qp)


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
            st.dataframe(out["decomposition"], hide_index=True, width="stretch")
    with mid:
        st.caption("名堂")
        if out["mingtang"].empty:
            st.write("平胡 (no 名堂)" if facts.get("huxi") is not None else "–")
        else:
            st.dataframe(out["mingtang"], hide_index=True, width="stretch")
    with right:
        st.caption("settlement")
        st.dataframe(out["settlement"], hide_index=True, width="stretch")
