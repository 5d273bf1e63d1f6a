"""``/stats``: ``paohuzi stats --json`` of the named runs, from the same code."""

# No ``from __future__ import annotations``: FastAPI reads the endpoint's annotations.

from typing import Annotated, Any

from fastapi import FastAPI, Query
from fastapi.responses import JSONResponse, Response

from paohuzi.service import models
from paohuzi.service.context import ERRORS, ROOT_NAME, Context
from paohuzi.service.errors import ApiError


def add(app: FastAPI, ctx: Context) -> None:
    """``/stats`` on ``app``."""
    lim = ctx.lim

    @app.get("/stats", response_model=models.Stats, responses=ERRORS, tags=["stats"])
    def stats(
        run: Annotated[
            list[str],
            Query(
                max_length=lim.stats_runs_max,
                description="Runs to summarise (repeat the parameter); none: every run.",
            ),
        ] = [],  # noqa: B006 (FastAPI copies a default; a list parameter needs one)
    ) -> Response:
        """``paohuzi stats --json`` of the named runs (every run without ``run``), from
        the same code; ``warnings``: what it prints on stderr (a damaged run left out, a
        summary table not used). A damaged run asked for by name is refused (409)."""
        from replay.analysis.stats import run_stats, stats_payload, use_summaries

        st = ctx.store()
        names = list(dict.fromkeys(run))
        for name in names:
            ctx.known(st, name)
        if not names and not st.run_names():
            raise ApiError(404, f"no runs in the store {ROOT_NAME}")
        warnings: list[str] = []

        def work(state: Any, con: Any) -> Any:
            return run_stats(
                st,
                names,
                con=con,
                on_skip=warnings.append,
                summaries=use_summaries(),
                state=state,
            )

        payload = stats_payload(ctx.timed(st, work))
        payload["warnings"] = [ctx.say(w) for w in warnings]
        return JSONResponse(payload)
