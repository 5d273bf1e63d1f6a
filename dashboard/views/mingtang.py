"""名堂: how often each 名堂 counts and what it contributes to the score, per 花样 level."""

from __future__ import annotations

import streamlit as st

from dashboard import ui
from dashboard.queries import stats as q
from dashboard.services import stats as svc

state, f = ui.start(
    "名堂",
    "Share of wins carrying each 名堂 (Wilson 95 %), and its contribution: the share of the"
    " level's total score paid in hands carrying it, and their score above 平胡 (score − 等).",
)
sig = state.signature

with ui.guard():
    mt = svc.mingtang_table(q.by_mingtang(sig, f), q.mingtang_codes(sig))

if mt.empty:
    st.info("No winning hand in the selection.")
    st.stop()

LEVELS = {
    "basic": "花样 basic",
    "half": "花样 half (default)",
    "full": "花样 full",
    "luzhou-a": "Luzhou, 底 mode a",
    "luzhou-b": "Luzhou, 底 mode b",
}
ORDER = {"basic": 0, "half": 1, "full": 2, "luzhou-a": 3, "luzhou-b": 4}
for level in sorted(mt["level"].unique(), key=lambda lv: (ORDER.get(str(lv), 9), str(lv))):
    g = mt[mt["level"] == level]
    st.subheader(LEVELS.get(str(level), str(level)))
    n = int(g["of wins"].iloc[0]) if len(g) else 0
    st.caption(f"{n:,} wins under these rules")
    ui.rate_chart(g, "名堂", "share of wins", sort="-x")
    shown = g.drop(columns=["level", "p", "lo", "hi"]).reset_index(drop=True)
    event = ui.table(  # "of wins" is the caption's
        shown.drop(columns=["bit", "of wins"]),
        f"mingtang-{level}",
        hide=(),
        on_select="rerun",
        selection_mode="single-row",
        key=f"mt_{level}",
        height=35 * (len(shown) + 1) + 3,
    )
    picked = event.selection.rows if event is not None else []
    if picked:
        bit = int(shown.iloc[picked[0]]["bit"])
        st.switch_page(
            ui.PAGE_FILES["drilldown"],
            query_params=ui.selection_params(
                {"cond": "mingtang", "value": str(bit)} if bit >= 0 else {"cond": "pinghu"}
            ),
        )
st.caption("Select a row to list those hands in the Drill-down page.")
