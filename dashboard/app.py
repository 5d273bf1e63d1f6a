"""The dashboard's entry point: ``streamlit run dashboard/app.py`` (``paohuzi dashboard``).

The store is ``$PAOHUZI_DATA`` (or ./data); pages are declared here with ``st.navigation``
(in sections, all of them listed) and the filters live in the sidebar, shared by every page
and kept in the URL (:func:`dashboard.ui.sidebar`). Their scripts are in ``views/``,
not ``pages/``: a ``pages/`` folder next to the entry script also switches on Streamlit's
folder-based navigation, whose first answer to a page's own URL (a bookmark, a shared
drill-down link) is a "Page not found" dialog before ``st.navigation`` has run.
"""

from __future__ import annotations

import sys
from pathlib import Path

# ``streamlit run`` puts this file's folder on sys.path, not the project's root.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import streamlit as st  # noqa: E402

from dashboard import db, ui  # noqa: E402
from replay.store.ducklimits import DuckLimitsError, duckdb_settings  # noqa: E402

# a 240-pixel sidebar (Streamlit's is 300): the pages' tables fit beside it at 1,024 pixels
st.set_page_config(
    page_title="跑胡子 dashboard", page_icon="🀄", layout="wide", initial_sidebar_state=240
)

P = ui.PAGE_FILES
#: The pages in sections, every one listed (``expanded=True``: no "View more" hiding the last).
PAGES = {
    "Figures": [
        st.Page(P["overview"], title="Overview", icon=":material/home:", default=True),
        st.Page(
            P["win_rates"], title="Win rates", icon=":material/emoji_events:", url_path="win-rates"
        ),
        st.Page(P["huxi"], title="胡息 and score", icon=":material/calculate:", url_path="huxi"),
        st.Page(
            P["huang"], title="荒庄", icon=":material/hourglass_empty:", url_path="huangzhuang"
        ),
        st.Page(P["mingtang"], title="名堂", icon=":material/style:", url_path="mingtang"),
        st.Page(
            P["compare"], title="Compare", icon=":material/compare_arrows:", url_path="compare"
        ),
        st.Page(
            P["reference"], title="Reference", icon=":material/fact_check:", url_path="reference"
        ),
    ],
    "Hands": [
        st.Page(P["actions"], title="Actions", icon=":material/touch_app:", url_path="actions"),
        st.Page(P["drilldown"], title="Drill-down", icon=":material/search:", url_path="drilldown"),
        st.Page(P["replay"], title="Replay", icon=":material/play_circle:", url_path="replay"),
        st.Page(P["review"], title="Review", icon=":material/analytics:", url_path="review"),
    ],
    "Tools": [
        st.Page(P["play"], title="Play", icon=":material/playing_cards:", url_path="play"),
        st.Page(P["sql"], title="SQL", icon=":material/database:", url_path="sql"),
    ],
}

page = st.navigation(PAGES, expanded=True)
try:  # ``paohuzi dashboard`` checks them before it starts; ``streamlit run`` does not
    duckdb_settings()
except DuckLimitsError as e:
    st.error(f"{e}: the dashboard cannot open the store's catalog with it.")
    st.stop()
with db.one_signature():  # one state of the store per render
    try:
        ui.sidebar(db.store_state())
    except OSError as e:
        st.sidebar.error(db.redact(f"Cannot read the store: {e}"))
    page.run()
