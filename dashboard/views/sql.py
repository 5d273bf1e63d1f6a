"""SQL: a read-only query box over the views, with a row limit and a time limit.

Four fences: the statement must be one SELECT that reads only the page's tables and
nothing of the host (DuckDB's own parser and parse tree decide, ``services.sqlguard``); it
runs in a process of its own (``services.sqlprocess``); its connection is opened read-only;
and external access is off and locked (no ATTACH, COPY, reading or writing other files,
extensions, network, SET).

That process has bounded memory (for any expression: an operating-system cap), spill space,
threads and time, and the result is bounded in rows, bytes per value and bytes in all
(``services.sqllimits``, set by ``PAOHUZI_SQL_*`` environment variables): a query over a
limit is one line saying which limit stopped it, not a dashboard that runs out of memory or
a browser tab that cannot show the result.
"""

from __future__ import annotations

import streamlit as st

from dashboard import db, ui
from dashboard.services.sqlguard import RefusedSQL, check_select, named_params
from dashboard.services.sqllimits import LimitsError, fmt_size, settings_off

state, f = ui.start(
    "SQL",
    "One SELECT (or WITH … SELECT) over the views runs, hands, events, seats, the summary"
    " tables (summary_hands, summary_values, … docs/LOG_FORMAT.md §10) and the code"
    " tables; read-only, with a row and a time limit. `$runs`, `$seats` and `$policies` are"
    " the sidebar's selection (lists; empty seats/policies mean all), passed as parameters.",
    pools=False,
)

EXAMPLES = {
    # the first (shown on arrival) reads the summary tables: quick at any store size
    "荒庄 rate per run (summary tables: quick at any size)": (
        "SELECT run, sum(n) AS hands, sum(n) FILTER (WHERE outcome = 1) / sum(n) AS huang_rate"
        "\nFROM summary_hands\nGROUP BY run\nORDER BY run"
    ),
    "荒庄 rate and mean winning 胡息 per run (scans every hand)": (
        "SELECT run, avg((outcome = 1)::INT) AS huang_rate, avg(huxi) AS mean_huxi,"
        " count(*) AS hands\nFROM hands\nGROUP BY run\nORDER BY run"
    ),
    "declined wins (过 with 胡 on offer) per seat": (
        "SELECT seat, count(*) AS declined\nFROM events\nWHERE kind = 0 AND options & 2 <> 0"
        "\nGROUP BY seat ORDER BY seat"
    ),
    "win rate per policy (seat rows)": (
        "SELECT policy, avg(won::INT) AS win_rate, count(*) AS seat_hands\nFROM seats"
        "\nGROUP BY policy ORDER BY win_rate DESC"
    ),
    "名堂 counts": (
        "SELECT m.name, m.level, count(*) AS wins\nFROM hands h JOIN mingtang_codes m"
        " ON (h.mingtang >> m.bit) & 1 = 1\nGROUP BY ALL ORDER BY wins DESC"
    ),
    "runs": "SELECT * FROM runs",
    "the sidebar's selection ($runs, $seats, $policies)": (
        "SELECT run, seat, policy, count(*) AS seat_hands, avg(won::INT) AS win_rate\nFROM seats"
        "\nWHERE list_contains($runs, run)\n  AND (len($seats) = 0 OR list_contains($seats, seat))"
        "\n  AND (len($policies) = 0 OR list_contains($policies, policy))\nGROUP BY ALL ORDER BY ALL"
    ),
}

try:
    limits = db.sql_limits()
except LimitsError as e:
    st.error(f"The SQL page's limits are misconfigured: {e}. See dashboard/README.md.")
    st.stop()

ui.keep("sql_example", "sql_text", "sql_limit", "sql_timeout")  # a query typed stays typed
ex = st.selectbox("example", list(EXAMPLES), key="sql_example")
if st.session_state.get("_sql_example") != ex:
    st.session_state["sql_text"] = EXAMPLES[ex]
    st.session_state["_sql_example"] = ex
    ui.keep("sql_text")
text = st.text_area("query", key="sql_text", height=160)
# defaults through the session state, not value=: a value kept by ui.keep is then no clash
# (Streamlit logs a warning for a widget given both), and it is held within the limits
ss = st.session_state
ss["sql_limit"] = min(ss.get("sql_limit", 1_000), limits.max_rows)
ss["sql_timeout"] = min(ss.get("sql_timeout", 10), limits.max_seconds)
c = st.columns(3)
limit = int(c[0].number_input("row limit", 1, limits.max_rows, step=100, key="sql_limit"))
timeout = float(c[1].number_input("time limit (s)", 1, limits.max_seconds, key="sql_timeout"))
c[2].write("")
c[2].button("Run", type="primary", key="sql_run")

try:
    stmt = check_select(text)
except RefusedSQL as e:
    st.error(f"Not run: {e}")
    st.stop()

available = {
    "runs": list(f.runs),
    "seats": [int(x) for x in f.seats],
    "policies": list(f.policies),
}
res = db.run_user_sql(stmt, limit, timeout, named_params(stmt, available), limits)
off = settings_off(res.settings, limits) if res.settings else []
if off:
    st.warning(
        "This query ran without the configured DuckDB limits ("
        + "; ".join(off)
        + "): the store's catalog did not apply them."
    )
if res.error:
    st.error(res.error)
else:
    assert res.frame is not None
    note = f" (stopped at the limit of {limit:,} rows)" if res.truncated else ""
    st.caption(f"{len(res.frame):,} rows in {res.seconds:.2f} s{note}")
    if res.size_capped:
        st.warning(
            f"The result is larger than the limit of {fmt_size(limits.max_result)}"
            f" (PAOHUZI_SQL_MAX_RESULT): only the first {len(res.frame):,} rows are shown."
            " Select fewer rows or columns, or aggregate."
        )
    if res.cut_cells:
        st.warning(
            f"{res.cut_cells:,} value{'s' if res.cut_cells != 1 else ''} longer than"
            f" {fmt_size(limits.max_cell)} (PAOHUZI_SQL_MAX_CELL) "
            + ("is" if res.cut_cells == 1 else "are")
            + " cut there, ending in …"
        )
    ui.table(res.frame, "sql-result", hide=(), grid=True)
st.caption(f"Limits: {limits.describe()}; see dashboard/README.md to change them.")

with st.expander("Views and columns"):
    try:
        cols = db.query(
            "SELECT table_name, string_agg(column_name || ' ' || data_type, ', ' ORDER BY"
            " ordinal_position) AS columns FROM information_schema.columns"
            " GROUP BY table_name ORDER BY table_name"
        )
        ui.table(cols, "sql-views", hide=())
    except db.StoreReadError as e:
        st.error(str(e))  # already relative to the store
    st.caption(
        "Codes: docs/LOG_FORMAT.md §5 (also in the tables outcome_codes, source_codes,"
        " action_kinds, mingtang_codes)."
    )
