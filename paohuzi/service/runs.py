"""The runs: ``/runs`` (``paohuzi runs --json`` with the integrity verdict) and
``/runs/{run}`` (one run's manifest facts)."""

# No ``from __future__ import annotations``: FastAPI reads the endpoints' annotations.

from typing import Any

from fastapi import FastAPI

from engine.errors import PaohuziError
from paohuzi.service import models
from paohuzi.service.context import ERRORS, Context, RunName
from paohuzi.service.errors import ApiError


def add(app: FastAPI, ctx: Context) -> None:
    """``/runs`` and ``/runs/{run}`` on ``app``."""

    @app.get("/runs", response_model=list[models.RunRow], responses=ERRORS, tags=["runs"])
    def runs() -> list[dict[str, Any]]:
        """Every run of the store (``paohuzi runs --json``), each with whether its shards
        pass the integrity checks and, if not, why."""
        from replay.store import manage

        st = ctx.store()
        rows = manage.run_summaries(st)
        state = st.scan()
        for r in rows:
            info = state.run(r["run"])
            problem = info.problem if info is not None else r.get("error")
            r["damaged"] = problem is not None
            r["problem"] = None if problem is None else ctx.say(problem)
            if r.get("error") is not None:
                r["error"] = ctx.say(r["error"])
        return rows

    @app.get("/runs/{run}", response_model=models.RunDetail, responses=ERRORS, tags=["runs"])
    def run_detail(run: RunName) -> dict[str, Any]:
        """One run's manifest facts: rules, policies, seed, hands and their ids, shards'
        verdict."""
        from replay.store import manage

        st = ctx.store()
        ctx.known(st, run)
        info = st.scan().run(run)
        if info is None:
            raise ApiError(404, f"no run {run!r}")
        # the manifest the state was checked by, not one a writer committed since
        manifest = info.manifest
        try:
            ranges = manage.hand_ranges(manifest if manifest is not None else st.run(run).manifest)
        except PaohuziError:
            ranges = []
        return {
            "run": info.name,
            "status": info.status,
            "state": info.state,
            "damaged": info.problem is not None,
            "problem": None if info.problem is None else ctx.say(info.problem),
            "summary_problem": None
            if info.summary_problem is None
            else ctx.say(info.summary_problem),
            "hands": info.hands,
            "hands_target": info.hands_target,
            "events": info.events,
            "hand_ranges": ranges,
            "rules": info.rules,
            "rules_preset": info.rules_preset,
            "rules_fingerprint": info.rules_fingerprint,
            "rule_set": dict(info.rules_items),
            "players": info.players,
            "level": info.level,
            "min_huxi": info.min_huxi,
            "policies": list(info.policies),
            "duplicate": info.duplicate,
            "rotations": info.rotations,
            "seed": info.seed,
            "session_length": info.session_length,
            "created": info.created,
            "updated": info.updated,
            "schema_version": info.schema_version,
            "code_version": info.code_version,
            "bytes": info.bytes,
        }
