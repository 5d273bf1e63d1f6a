"""Overview: the runs in the store, the selection's totals and its headline rates."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import ui
from dashboard.queries import stats as q
from dashboard.services import stats as svc

state, f = ui.start(
    "跑胡子 — overview", "Runs in the store, totals and headline rates with 95 % intervals."
)

st.subheader("Runs in the store")
runs = pd.DataFrame(
    [
        {
            "run": r.name,
            "state": r.state if r.problem is None else "left out",
            "rules": r.rules,
            "players": r.players,
            "policies": ",".join(r.policies),
            "duplicate": r.duplicate,
            "hands": r.hands,
            "of": r.hands_target,
            "date": r.created[:19].replace("T", " "),
            "seed": r.seed,
            "selected": r.name in f.runs,
        }
        for r in state.runs
    ]
)
st.dataframe(runs, hide_index=True, width="stretch")

with ui.guard():
    hl = q.headline(state.signature, f).to_dict("records")[0]
    wm = q.winning_moments(state.signature, f).to_dict("records")[0]
h = svc.headline(hl, wm)

st.subheader("Selection")
c = st.columns(5)
c[0].metric("runs", f"{h.runs}")
c[1].metric("hands", f"{h.hands:,}")
c[2].metric("wins", f"{h.win.k:,}")
c[3].metric("荒庄", f"{h.huang.k:,}")
c[4].metric("events", f"{sum(r.events for r in state.usable_runs if r.name in f.runs):,}")

st.subheader("Headline rates")
cols = st.columns(4)
for col, (name, r) in zip(cols, list(h.rates().items())[:4]):
    col.metric(name, svc.fmt_rate(r), help=f"95 % interval {svc.fmt_interval(r)}, n = {r.n:,}")
    col.caption(f"95 %: {svc.fmt_interval(r)} · n = {r.n:,}")
ui.table(svc.headline_table(h))
st.caption(
    "Rates: Wilson intervals (on deals for --duplicate runs, whose rotations share a deck);"
    " means: cluster-robust normal intervals. n is what each number rests on."
)
st.page_link(
    ui.PAGE_FILES["reference"],
    label="The selection beside the published reference figures of its preset",
    icon=":material/fact_check:",
)
