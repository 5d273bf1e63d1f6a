"""The one statistics layer: every figure of ``paohuzi stats``, of the dashboard's pages and
of any later front end, defined once — its SQL and its interval.

A figure is asked for a :class:`~replay.analysis.figures.selection.Selection` (runs, seats,
policies) and a source: a summary :data:`~replay.analysis.figures.selection.Plan` when every
selected run has its summary tables (:func:`~replay.analysis.figures.selection.plan`), or
None, the hands themselves. Each statement function gives, for either source, the same
columns and the same numbers (``tests/replay/analysis/figures`` holds them to it) as a
:data:`~replay.analysis.figures.params.Statement`: SQL text with DuckDB ``$name``
parameters and their values; :mod:`~replay.analysis.figures.results` shapes the rows into
rates and means with their intervals. Front ends run the statements on their own connection
(:func:`fetch`, or the dashboard's cached ``db.query``) and only format.

* :mod:`.selection` — what is selected, the summary plan, the ``WHERE`` of each kind of number;
* :mod:`.outcomes` — outcomes, 自摸, winning moments, the automatic 天胡;
* :mod:`.groups` — seats, dealer, policies, runs; paired policy differences; convergence;
* :mod:`.values` — histograms of 胡息 / 等 / 番 / score, sources, 名堂, a sample of wins;
* :mod:`.huang` — 荒庄 by group, survival over the stock, dealer retention;
* :mod:`.drill` — hands matching a condition, and their decisions;
* :mod:`.results` — the result types and their intervals.
"""

from __future__ import annotations

from typing import Any

from replay.analysis.figures.params import Statement


def fetch(con: Any, statement: Statement) -> list[dict[str, Any]]:
    """Run one statement on a DuckDB connection: its rows as dicts (column name → value)."""
    sql, params = statement
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]
