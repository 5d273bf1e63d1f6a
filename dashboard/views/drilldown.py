"""Drill-down: the hands behind a number (a chart bar, a table row, a link), and from there
into the replay at the decisive step."""

from __future__ import annotations

import streamlit as st

from dashboard import ui
from dashboard.queries import hands as qh
from dashboard.queries import stats as q
from dashboard.services import drill
from dashboard.services import stats as svc
from replay.analysis.figures.drill import EVENT_CONDITIONS, FACT_CONDITIONS

state, f = ui.start(
    "Drill-down",
    "The hands behind a number. Pick a condition (or arrive here from a chart bar or a table"
    " row), then open a hand in the replay at its decisive step.",
)
sig = state.signature
LIMIT = 500

# Arriving from another page: ?cond=…&value=… (checked against the catalogue).
cond_qp, value_qp = drill.parse_params(st.query_params.to_dict())
applied = (cond_qp, value_qp)
if cond_qp is not None and st.session_state.get("_dd_applied") != applied:
    st.session_state["dd_cond"] = cond_qp
    if value_qp is not None:
        st.session_state[f"dd_value_{cond_qp}"] = value_qp
    st.session_state["_dd_applied"] = applied

with ui.guard():
    codes = q.mingtang_codes(sig)
names = drill.mingtang_names(codes)
luzhou = {r.ruleset == "luzhou" for r in state.usable_runs if r.name in f.runs}
mt_bits = [int(r["bit"]) for r in codes.to_dict("records") if (r["level"] in ("a", "b")) in luzhou]

cond = st.selectbox(
    "Hands",
    drill.MENU,
    key="dd_cond",
    format_func=lambda c: drill.LABELS[c].replace("{v}", "…").replace("{name}", "…"),
)
value: int | None = None
vkey = f"dd_value_{cond}"
if cond == "mingtang":
    if st.session_state.get(vkey) not in mt_bits and mt_bits:
        st.session_state[vkey] = mt_bits[0]
    value = st.selectbox("名堂", mt_bits, key=vkey, format_func=lambda b: names.get(b, str(b)))
elif cond == "source":
    options = sorted(svc.SOURCE_LABELS)
    if st.session_state.get(vkey) not in options:
        st.session_state[vkey] = 0
    value = st.selectbox(
        "source", options, key=vkey, format_func=lambda c: svc.SOURCE_LABELS.get(c, str(c))
    )
elif drill.takes_value(cond):
    if vkey not in st.session_state:
        st.session_state[vkey] = drill.DEFAULT_VALUES.get(cond, 0)
    value = int(st.number_input("value", min_value=-1000, max_value=100000, step=1, key=vkey))

# the condition in the URL (a link reproduces the list), applied above only when it changes
ui.param_out("cond", cond)
ui.param_out("value", value)
st.session_state["_dd_applied"] = (cond, value)
title = drill.label(cond, value, names)
st.subheader(title)

with ui.guard():
    count = qh.hand_count(sig, f, cond, value).to_dict("records")[0]
    listed = qh.hand_list(sig, f, cond, value, LIMIT)
k, n = int(count["k"]), int(count["n"])
rate = svc.Rate.of(k, n)
base = "selected wins" if drill.CONDITIONS[cond][2] else "selected hands"
if cond in FACT_CONDITIONS and q.summary_plan(f) is None:  # the summaries count every hand
    missing = [r.name for r in state.usable_runs if r.name in f.runs and not r.has_facts]
    if missing:
        base += " of the runs with facts"
        st.warning(
            f"No per-hand facts yet for {', '.join(missing)} (recorded before them): run"
            f" `paohuzi index {' '.join(missing)}` to count their hands too."
        )
st.markdown(
    f"**{k:,}** of {n:,} {base}: {svc.fmt_rate(rate)} (95 % {svc.fmt_interval(rate)})."
    + (f" The first {LIMIT} are listed." if k > LIMIT else "")
)

# a hand of an event condition opens where it happened, any other at its decisive step
AT = cond if cond in EVENT_CONDITIONS else "decisive"
WHERE = "step where it happened" if cond in EVENT_CONDITIONS else "decisive step"
table = drill.hand_table(listed, names)
if table.empty:
    st.info("No hand matches.")
    st.stop()

#: the columns shown unless asked for all: the ones that fit beside the sidebar at 1,024 px
SHORT = ["run", "hand", "outcome", "winner", "source", "胡息", "等", "番", "score", "名堂"]
wide = st.toggle("all columns (dealer, hu card, stock left, steps)", key="dd_all_columns")
event = ui.table(
    table if wide else table[SHORT],
    "drilldown-hands",
    hide=(),
    grid=True,
    on_select="rerun",
    selection_mode="single-row",
    key=f"dd_table_{cond}_{value}",
)
keys = [f"{r} / {h}" for r, h in zip(table["run"], table["hand"])]
picked = event.selection.rows if event is not None else []
if picked:
    row = table.iloc[picked[0]]
    st.switch_page(
        ui.PAGE_FILES["replay"],
        query_params=ui.selection_params(
            {"run": str(row["run"]), "hand": str(int(row["hand"])), "at": AT}
        ),
    )
st.caption("Select a row to open that hand in the replay, or pick it here:")
if st.session_state.get("dd_pick") not in keys:
    st.session_state["dd_pick"] = keys[0]
choice = st.selectbox("hand", keys, key="dd_pick")
run, hand = choice.split(" / ")
st.page_link(
    ui.PAGE_FILES["replay"],
    label=f"Open {run} hand {hand} in the replay at the {WHERE}",
    icon=":material/play_circle:",
    query_params=ui.selection_params({"run": run, "hand": hand, "at": AT}),
)
