"""The HTTP API over a store (``paohuzi serve``, docs/SERVICE.md): read-only, but for the
import route, which writes only when an import token is configured.

Every answer comes from the library functions the commands use, so the API and the command
line say the same: ``/runs`` is :func:`replay.store.manage.run_summaries` (``paohuzi runs``)
with the integrity scan's verdict, ``/runs/{run}/hands`` is
:func:`replay.store.manage.query_hands` (``paohuzi hands``), ``/runs/{run}/hands/{hand}`` is
:func:`replay.replayer.replay_file.export_hand` (``paohuzi export``), ``…/state`` is
:func:`replay.replayer.hand.replayer_at` and :func:`replay.replayer.views.state_view`
(``paohuzi replay --format json``) and ``/stats`` is
:func:`replay.analysis.stats.run_stats` (``paohuzi stats --json``).

The store's checked state is kept and revalidated (:mod:`replay.store.snapshot`: a run
written meanwhile appears in the next answer, a damaged one drops out within the refresh
interval); each GET is answered from one state, and every whole GET answer carries an
ETag of its bytes (:mod:`.caching`). Nothing is written but what readers write anyway (the
checksum cache and a rebuilt catalog, as for every command), and the hands ``POST
/runs/{run}/hands`` accepts (through :func:`replay.replayer.importing.import_hands`, the one
import path, as ``paohuzi import``). Endpoints are plain functions: FastAPI runs them in its thread pool, each request
on its own DuckDB connection.
"""

# No ``from __future__ import annotations``: the endpoints' parameter types are built per
# app (their bounds are the limits), and FastAPI reads them at definition.

from pathlib import Path

from fastapi import FastAPI

from paohuzi.service import caching, docs, handlers, hands, importing, meta, runs, stats
from paohuzi.service.context import Context
from paohuzi.service.limits import Limits
from replay.version import package_version


def create_app(
    data_dir: str | Path,
    limits: Limits | None = None,
    import_token: str | None = None,
    refresh: float | None = None,
) -> FastAPI:
    """The API over the store at ``data_dir`` within ``limits`` (default :class:`Limits`).
    With ``import_token``, ``POST /runs/{run}/hands`` imports the verified hands of a
    request that bears it; without, that route answers 403 and the service writes nothing.
    The routes live one module per resource: :mod:`.meta`, :mod:`.runs`, :mod:`.hands`,
    :mod:`.importing`, :mod:`.stats`; the error answers in :mod:`.handlers`; ETags, 304,
    HEAD and the kept answers in :mod:`.caching`. ``refresh``: seconds between two full
    rechecks of the store's files (:mod:`replay.store.snapshot`; default
    ``$PAOHUZI_REFRESH`` or 2)."""
    lim = limits if limits is not None else Limits()
    if import_token is not None and not (import_token.isascii() and import_token.isprintable()):
        raise ValueError("the import token must be printable ASCII (a header's characters)")
    token = None if import_token is None else import_token.encode("utf-8")
    ctx = Context(Path(data_dir), lim, token, refresh)
    app = FastAPI(
        title="paohuzi",
        version=package_version(),
        summary="The runs, hands and statistics of a paohuzi store; verified import of hands"
        " with a token.",
        description="docs/SERVICE.md: endpoints, limits, examples.",
        # /runs/ is not /runs (404): a redirect would name the Host the client sent
        redirect_slashes=False,
        **docs.fastapi_kwargs(),  # /docs and /redoc from this machine, not a CDN
    )
    app.state.limits = lim
    app.state.importing = import_token is not None
    handlers.install(app, ctx)
    for resource in (meta, runs, hands, importing, stats):  # the order of the OpenAPI paths
        resource.add(app, ctx)
    docs.add(app)
    app.add_middleware(caching.Revalidate, ctx=ctx)
    app.state.live = ctx.live
    return app
