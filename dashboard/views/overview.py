"""Overview: the runs in the store, the selection's totals and its headline rates — one rule
set's, or for a selection of several rule sets one row per rule set (never pooled into one
number)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import ui
from dashboard.queries import stats as q
from dashboard.services import filters as fsvc
from dashboard.services import stats as svc
from replay.analysis.figures.selection import Selection

state, f = ui.start(
    "跑胡子 — overview",
    "Runs in the store, totals and headline rates with 95 % intervals.",
    pools=False,  # several rule sets: a row each below
)

st.subheader("Runs in the store")


def _policies(seats: tuple[str, ...], duplicate: bool) -> str:
    """A run's policies by seat, one policy in every seat as ``name ×3``."""
    text = f"{seats[0]} ×{len(seats)}" if len(set(seats)) == 1 else ", ".join(seats)
    return f"{text} (duplicate)" if duplicate else text


# the columns that fit beside the sidebar at 1,024 px (`paohuzi runs` lists every field)
runs = pd.DataFrame(
    [
        {
            "selected": r.name in f.runs,
            "run": r.name,
            "rules": r.rules,
            "seats": r.players,
            "policies": _policies(r.policies, r.duplicate),
            "hands": r.hands,
            "state": (r.state if r.problem is None else "left out")
            + ("" if r.hands == r.hands_target else f" ({r.hands:,} of {r.hands_target:,})"),
            "created": r.created[:10],
            "seed": r.seed,
        }
        for r in state.runs
    ]
)
ui.table(runs, "runs", hide=())

groups = fsvc.rule_groups(state, f)


def _headline(sel: Selection) -> svc.Headline:
    with ui.guard():
        hl = q.headline(state.signature, sel).to_dict("records")[0]
        wm = q.winning_moments(state.signature, sel).to_dict("records")[0]
    return svc.headline(hl, wm)


h = _headline(f)

st.subheader("Selection")
with st.container(horizontal=True, gap="medium"):  # each as wide as its number: never cut
    st.metric("runs", f"{h.runs}", width="content")
    st.metric("hands", f"{h.hands:,}", width="content")
    st.metric("wins", f"{h.win.k:,}", width="content")
    st.metric("荒庄", f"{h.huang.k:,}", width="content")
    events = sum(r.events for r in state.usable_runs if r.name in f.runs)
    st.metric("events", f"{events:,}", width="content")

if len(groups) == 1:
    ((rules, names),) = groups.items()
    st.subheader(f"Headline rates · {rules}")
    st.caption(
        f"One rule set: {rules}, {len(names)} run{'s' if len(names) > 1 else ''}"
        f" ({', '.join(names) if len(names) <= 4 else f'{len(names)} runs'})."
    )
    cols = st.columns(4)
    for col, (name, r) in zip(cols, list(h.rates().items())[:4]):
        col.metric(name, svc.fmt_rate(r), help=f"95 % interval {svc.fmt_interval(r)}, n = {r.n:,}")
        col.caption(f"95 %: {svc.fmt_interval(r)} · n = {r.n:,}")
    ui.table(svc.headline_table(h), f"headline-{rules}")
else:
    st.subheader(f"Headline rates by rule set ({len(groups)} rule sets)")
    st.info(
        f"The selection mixes {len(groups)} rule sets ({', '.join(groups)}): their games"
        " differ, so each has its row below rather than one pooled rate. Choose one under"
        " Rules in the sidebar to see one rule set's numbers in full.",
        icon=":material/layers:",
    )
    per_rules = {
        rules: (
            len(names),
            _headline(
                Selection(
                    runs=names,
                    seats=f.seats,
                    policies=f.policies,
                    duplicate=None
                    if f.duplicate is None
                    else tuple(n for n in f.duplicate if n in names),
                )
            ),
        )
        for rules, names in groups.items()
    }
    ui.table(svc.rules_table(per_rules), "headline-by-rules")
    with st.expander("Every headline number, per rule set"):
        ui.table(svc.rules_long_table(per_rules), "headline-by-rules-all")
st.caption(
    "Rates: Wilson intervals (on deals for --duplicate runs, whose rotations share a deck);"
    " means: cluster-robust normal intervals. n is what each number rests on."
)
st.page_link(
    ui.PAGE_FILES["reference"],
    label="The selection beside the published reference figures of its preset",
    icon=":material/fact_check:",
    query_params=ui.selection_params(),
)
