"""The service's own routes: ``/health`` and ``/version``."""

# No ``from __future__ import annotations``: FastAPI reads the endpoints' annotations.

from typing import Any

from fastapi import FastAPI

from paohuzi.service import models
from paohuzi.service.context import Context
from replay.version import package_version

#: This API's version (``/version``); a change that breaks a client raises it.
API_VERSION = 1


def add(app: FastAPI, ctx: Context) -> None:
    """``/health`` and ``/version`` on ``app``."""

    @app.get("/health", response_model=models.Health, tags=["service"])
    def health() -> dict[str, Any]:
        """The service answers; whether its data directory exists."""
        return {"status": "ok", "store": ctx.root.is_dir()}

    @app.get("/version", response_model=models.Version, tags=["service"])
    def version() -> dict[str, Any]:
        """Versions: paohuzi, this API, the state view, the replay file, the table schema."""
        from replay.replayer.replay_schema import FORMAT, VERSION
        from replay.replayer.views import VIEW_VERSION
        from replay.schema import SCHEMA_VERSION

        return {
            "paohuzi": package_version(),
            "api": API_VERSION,
            "view_version": VIEW_VERSION,
            "replay_format": FORMAT,
            "replay_version": VERSION,
            "schema_version": SCHEMA_VERSION,
        }
