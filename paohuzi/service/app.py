"""The HTTP API over a store (``paohuzi serve``, docs/SERVICE.md): read-only, but for the
ingest route, which writes only when an ingest token is configured.

Every answer comes from the library functions the commands use, so the API and the command
line say the same: ``/runs`` is :func:`replay.store.manage.run_summaries` (``paohuzi runs``)
with the integrity scan's verdict, ``/runs/{run}/hands`` is
:func:`replay.store.manage.query_hands` (``paohuzi hands``), ``/runs/{run}/hands/{hand}`` is
:func:`replay.replayer.exchange.export_hand` (``paohuzi export``), ``…/state`` is
:func:`replay.replayer.hand.replayer_at` and :func:`replay.replayer.views.state_view`
(``paohuzi replay --format json``) and ``/stats`` is
:func:`replay.analysis.stats.run_stats` (``paohuzi stats --json``).

The store is opened afresh for every request (a run written meanwhile appears, a damaged one
drops out); nothing is written but what readers write anyway (the checksum cache and a
rebuilt catalog, as for every command), and the hands ``POST /runs/{run}/hands`` accepts
(through :func:`replay.replayer.exchange.add_hands`, the one import path). Endpoints are plain functions: FastAPI runs them in
its thread pool, each request on its own DuckDB connection.
"""

# No ``from __future__ import annotations``: the endpoints' parameter types are built in
# create_app (their bounds are the limits), and FastAPI reads them at definition.

import asyncio
import hmac
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from fastapi import Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from engine.errors import PaohuziError, quote
from paohuzi.service import models
from paohuzi.service.deadline import Budget
from paohuzi.service.errors import ApiError, one_line, public, status_of
from paohuzi.service.limits import STREAM_BATCH, Limits
from replay.version import package_version

#: This API's version (``/version``); a change that breaks a client raises it.
API_VERSION = 1

#: What the store's root is called in a message (docs/SERVICE.md).
ROOT_NAME = "DATA"

T = TypeVar("T")

#: The error answers every endpoint documents.
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": models.ErrorBody, "description": "A query value the library refuses."},
    404: {"model": models.ErrorBody, "description": "No such run or hand."},
    409: {"model": models.ErrorBody, "description": "The run or hand is damaged."},
    422: {"model": models.ErrorBody, "description": "A parameter of the wrong type or range."},
    503: {"model": models.ErrorBody, "description": "The query took longer than the limit."},
}

#: The uint32 of ``hands.hand_id``.
MAX_HAND_ID = (1 << 32) - 1


def _written_in_digits(signed: bool) -> BeforeValidator:
    """An integer parameter as written: ASCII digits, after a ``-`` if ``signed`` (pydantic
    alone also reads ``1_0`` as 10, ``+5``, `` 5 `` and other digits than 0–9)."""
    pattern = re.compile(r"-?[0-9]+" if signed else r"[0-9]+")
    what = "digits 0-9" + (", after a - if negative" if signed else "")

    def check(value: Any) -> Any:
        if isinstance(value, str) and not pattern.fullmatch(value):
            raise PydanticCustomError(
                "int_parsing",
                "Input should be an integer written in {what}, not {given}",
                {"what": what, "given": quote(value)},
            )
        return value

    return BeforeValidator(check)


#: Integer parameters (path and query) are read strictly so.
DIGITS = _written_in_digits(signed=False)
SIGNED = _written_in_digits(signed=True)

RunName = Annotated[str, PathParam(description="The run's name (paohuzi runs).", max_length=200)]
HandId = Annotated[
    int, PathParam(description="The hand's id in its run.", ge=0, le=MAX_HAND_ID), DIGITS
]


def create_app(
    data_dir: str | Path, limits: Limits | None = None, ingest_token: str | None = None
) -> FastAPI:
    """The API over the store at ``data_dir`` within ``limits`` (default :class:`Limits`).
    With ``ingest_token``, ``POST /runs/{run}/hands`` adds the verified hands of a request
    that bears it; without, that route answers 403 and the service writes nothing."""
    lim = limits if limits is not None else Limits()
    if ingest_token is not None and not (ingest_token.isascii() and ingest_token.isprintable()):
        raise ValueError("the ingest token must be printable ASCII (a header's characters)")
    root = Path(data_dir)
    roots = {str(root.absolute()), str(root.resolve())}

    app = FastAPI(
        title="paohuzi",
        version=package_version(),
        summary="The runs, hands and statistics of a paohuzi store; verified ingest of hands"
        " with a token.",
        description="docs/SERVICE.md: endpoints, limits, examples.",
        # /runs/ is not /runs (404): a redirect would name the Host the client sent
        redirect_slashes=False,
    )
    app.state.limits = lim
    app.state.ingest = ingest_token is not None

    outcomes, mingtang_names = filter_names()
    choices = {"outcome": outcomes, "mingtang": mingtang_names}

    def say(e: object) -> str:
        return public(e, roots, ROOT_NAME)

    # -----------------------------------------------------------------------------------------
    # Errors: {"error": "one line"}
    # -----------------------------------------------------------------------------------------

    def error(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    @app.exception_handler(ApiError)
    async def _api_error(_r: Request, e: ApiError) -> JSONResponse:
        return error(e.status, say(e.message))

    @app.exception_handler(PaohuziError)
    async def _library_error(_r: Request, e: PaohuziError) -> JSONResponse:
        return error(status_of(e), say(e))

    @app.exception_handler(RequestValidationError)
    async def _bad_request(_r: Request, e: RequestValidationError) -> JSONResponse:
        errs = e.errors()
        if not errs:
            return error(422, "bad request")
        first = errs[0]
        loc = [str(x) for x in first.get("loc", ())]
        where = f"{loc[0]} parameter {'.'.join(loc[1:])}" if len(loc) > 1 else ".".join(loc)
        msg = first.get("msg", "invalid")
        if loc and loc[-1] in choices and first.get("type") == "string_pattern_mismatch":
            known = ", ".join(choices[loc[-1]])
            msg = f"unknown value {quote(first.get('input'))} (known: {known})"
        return error(422, say(f"{where}: {msg}"))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(r: Request, e: StarletteHTTPException) -> JSONResponse:
        text = "not found" if e.status_code == 404 else str(e.detail)
        headers = dict(e.headers or {})
        if e.status_code == 405:
            headers["Allow"] = allowed(r) or headers.get("Allow", "")
        # the request's path as sent: the client's words, not a path of the server to hide
        raw = r.scope.get("raw_path")
        path = raw.decode("latin-1") if isinstance(raw, bytes) else r.url.path
        message = one_line(f"{say(text)}: {r.method} {path}")
        return JSONResponse({"error": message}, status_code=e.status_code, headers=headers)

    def allowed(r: Request) -> str:
        """The methods of every route of the request's path (Starlette names one route's)."""
        methods: set[str] = set()
        for route in app.router.routes:
            match, _ = route.matches(r.scope)
            if match is not Match.NONE:
                methods |= getattr(route, "methods", None) or set()
        return ", ".join(sorted(methods))

    @app.exception_handler(_Refusal)
    async def _refusal(_r: Request, e: _Refusal) -> JSONResponse:
        return JSONResponse({"error": say(e.message)}, status_code=e.status, headers=e.headers)

    @app.exception_handler(Exception)
    async def _internal(_r: Request, e: Exception) -> JSONResponse:
        import duckdb

        if isinstance(e, OSError | duckdb.Error):  # the store cannot be read: say why
            return error(500, say(f"cannot read the store: {e}"))
        return error(500, f"internal error ({type(e).__name__})")

    # -----------------------------------------------------------------------------------------
    # Helpers
    # -----------------------------------------------------------------------------------------

    def store() -> Any:
        from replay.store.runs import open_store

        return open_store(root)

    def known(st: Any, name: str) -> None:
        """404 unless the store has a run folder ``name`` (with the library's message)."""
        from replay.store.layout import check_run_name

        if name in st.run_names():
            return
        try:
            check_run_name(name)
            st.run(name)
        except PaohuziError as e:
            raise ApiError(404, str(e)) from None

    # A stale catalog is rebuilt by the connection that finds it so, in a temporary file
    # named by the process id: two threads of this process must not rebuild it at once.
    connecting = threading.Lock()

    def connect(st: Any) -> tuple[Any, Any]:
        """The store's scan and a catalog connection opened on it."""
        state = st.scan()
        with connecting:
            return state, st.connect(state)

    def timed(st: Any, work: Callable[[Any, Any], T]) -> T:
        """``work(state, con)`` on the store's scan and a new catalog connection, within
        the query time limit."""
        state, con = connect(st)
        budget = Budget(con, lim.query_seconds)
        try:
            with budget.running():
                return work(state, con)
        except Exception:
            if budget.spent:
                raise ApiError(503, budget.message) from None
            raise
        finally:
            con.close()

    # -----------------------------------------------------------------------------------------
    # Service
    # -----------------------------------------------------------------------------------------

    @app.get("/health", response_model=models.Health, tags=["service"])
    def health() -> dict[str, Any]:
        """The service answers; whether its data directory exists."""
        return {"status": "ok", "store": root.is_dir()}

    @app.get("/version", response_model=models.Version, tags=["service"])
    def version() -> dict[str, Any]:
        """Versions: paohuzi, this API, the state view, the replay file, the table schema."""
        from replay.record.schema import SCHEMA_VERSION
        from replay.replayer.replay_schema import FORMAT, VERSION
        from replay.replayer.views import VIEW_VERSION

        return {
            "paohuzi": package_version(),
            "api": API_VERSION,
            "view_version": VIEW_VERSION,
            "replay_format": FORMAT,
            "replay_version": VERSION,
            "schema_version": SCHEMA_VERSION,
        }

    # -----------------------------------------------------------------------------------------
    # Runs
    # -----------------------------------------------------------------------------------------

    @app.get("/runs", response_model=list[models.RunRow], responses=ERRORS, tags=["runs"])
    def runs() -> list[dict[str, Any]]:
        """Every run of the store (``paohuzi runs --json``), each with whether its shards
        pass the integrity checks and, if not, why."""
        from replay.store import manage

        st = store()
        rows = manage.run_summaries(st)
        state = st.scan()
        for r in rows:
            info = state.run(r["run"])
            problem = info.problem if info is not None else r.get("error")
            r["damaged"] = problem is not None
            r["problem"] = None if problem is None else say(problem)
            if r.get("error") is not None:
                r["error"] = say(r["error"])
        return rows

    @app.get("/runs/{run}", response_model=models.RunDetail, responses=ERRORS, tags=["runs"])
    def run_detail(run: RunName) -> dict[str, Any]:
        """One run's manifest facts: rules, policies, seed, hands and their ids, shards'
        verdict."""
        from replay.store import manage

        st = store()
        known(st, run)
        info = st.scan().run(run)
        if info is None:
            raise ApiError(404, f"no run {run!r}")
        try:
            ranges = manage.hand_ranges(st.run(run).manifest)
        except PaohuziError:
            ranges = []
        return {
            "run": info.name,
            "status": info.status,
            "state": info.state,
            "damaged": info.problem is not None,
            "problem": None if info.problem is None else say(info.problem),
            "summary_problem": None if info.summary_problem is None else say(info.summary_problem),
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

    # -----------------------------------------------------------------------------------------
    # Hands
    # -----------------------------------------------------------------------------------------

    Winner = Annotated[int | None, Query(ge=0, le=3, description="Won by this seat."), DIGITS]
    Outcome = Annotated[
        str | None,
        Query(
            pattern=_one_of(outcomes),
            json_schema_extra={"enum": outcomes},
            description="With this outcome.",
        ),
    ]
    HuxiMin = Annotated[int | None, Query(ge=-32768, le=32767, description="胡息 ≥ this."), SIGNED]
    HuxiMax = Annotated[int | None, Query(ge=-32768, le=32767, description="胡息 ≤ this."), SIGNED]
    Mingtang = Annotated[
        str | None,
        Query(
            pattern=_one_of(mingtang_names),
            json_schema_extra={"enum": mingtang_names},
            description="With this 名堂: pinyin id or name (honghu, 红胡).",
        ),
    ]

    @app.get("/runs/{run}/hands", response_model=models.HandsPage, responses=ERRORS, tags=["hands"])
    def hands(
        run: RunName,
        winner: Winner = None,
        outcome: Outcome = None,
        huxi_min: HuxiMin = None,
        huxi_max: HuxiMax = None,
        mingtang: Mingtang = None,
        limit: Annotated[
            int, Query(ge=1, le=lim.page_max, description="Hands in the page."), DIGITS
        ] = lim.page_default,
        offset: Annotated[
            int,
            Query(ge=0, le=MAX_HAND_ID, description="Matching hands skipped first."),
            DIGITS,
        ] = 0,
        cursor: Annotated[
            int | None,
            Query(ge=0, le=MAX_HAND_ID, description="Only hands with an id ≥ this (next_cursor)."),
            DIGITS,
        ] = None,
    ) -> dict[str, Any]:
        """The hands of the run that match every filter, in hand order (``paohuzi hands
        --json``), one page: ``limit`` hands after skipping ``offset`` matching ones, from
        hand ``cursor`` on. ``next_cursor`` starts the next page."""
        from replay.store import manage

        flt = manage.hand_filter(
            winner=winner,
            outcome=outcome,
            huxi_min=huxi_min,
            huxi_max=huxi_max,
            mingtang=mingtang,
            since=cursor,
        )
        st = store()
        known(st, run)
        rows, more = timed(
            st, lambda state, con: manage.query_hands(st, run, flt, limit, offset, con, state)
        )
        rows = [manage.named_hand(r) for r in rows]
        return {
            "run": run,
            "hands": rows,
            "more": more,
            "next_cursor": rows[-1]["hand_id"] + 1 if more and rows else None,
            "limit": limit,
            "offset": offset,
        }

    @app.get(
        "/runs/{run}/hands.ndjson",
        responses={
            200: {
                "description": "One hand (a row of paohuzi hands --json) per line.",
                "content": {
                    "application/x-ndjson": {
                        "schema": {"$ref": "#/components/schemas/HandRow"},
                    }
                },
            },
            **ERRORS,
        },
        response_class=StreamingResponse,
        tags=["hands"],
    )
    def hands_ndjson(
        run: RunName,
        winner: Winner = None,
        outcome: Outcome = None,
        huxi_min: HuxiMin = None,
        huxi_max: HuxiMax = None,
        mingtang: Mingtang = None,
        since: Annotated[
            int | None, Query(ge=0, le=MAX_HAND_ID, description="Only hand ids ≥ this."), DIGITS
        ] = None,
        until: Annotated[
            int | None, Query(ge=0, le=MAX_HAND_ID, description="Only hand ids ≤ this."), DIGITS
        ] = None,
        max: Annotated[
            int,
            Query(ge=1, le=lim.stream_max, description="At most this many lines."),
            DIGITS,
        ] = lim.stream_default,
    ) -> StreamingResponse:
        """The matching hands as newline-delimited JSON, streamed in hand order: at most
        ``max`` lines; fewer means the end, exactly ``max``: ask again from ``since`` = the
        last hand id + 1. An error after the first line ends the stream with one
        ``{"error": …}`` line."""
        from replay.store import manage

        flt = manage.hand_filter(
            winner=winner,
            outcome=outcome,
            huxi_min=huxi_min,
            huxi_max=huxi_max,
            mingtang=mingtang,
            since=since,
            until=until,
        )
        st = store()
        known(st, run)
        state, con = connect(st)
        budget = Budget(con, lim.query_seconds)
        try:
            with budget.running():
                batches = manage.stream_hands(st, run, flt, max, con, STREAM_BATCH, state)
        except Exception:
            con.close()
            if budget.spent:
                raise ApiError(503, budget.message) from None
            raise

        def lines() -> Iterator[bytes]:
            try:
                while True:
                    try:
                        with budget.running():
                            batch = next(batches, None)
                    except Exception as e:
                        text = budget.message if budget.spent else say(e)
                        yield _line({"error": text})
                        return
                    if batch is None:
                        return
                    yield b"".join(_line(manage.named_hand(r)) for r in batch)
            finally:
                con.close()

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    @app.get(
        "/runs/{run}/hands/{hand}",
        response_model=models.ReplayFile,
        responses={
            200: {
                "description": "The replay file (JSON, or the text spelling with format=text).",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            },
            **ERRORS,
        },
        tags=["hands"],
    )
    def hand_file(
        run: RunName,
        hand: HandId,
        format: Annotated[
            Literal["json", "text"], Query(description="json, or the text spelling (.phz).")
        ] = "json",
    ) -> Response:
        """The hand as a replay file (docs/REPLAY_FILE.md): the bytes ``paohuzi export RUN
        HAND --format json`` (or ``text``) writes."""
        from replay.replayer import exchange

        st = store()
        known(st, run)
        text, _ = exchange.export_hand(st, run, hand, format)
        media = "application/json" if format == "json" else "text/plain; charset=utf-8"
        return Response(text.encode("utf-8"), media_type=media)

    @app.get(
        "/runs/{run}/hands/{hand}/state",
        response_model=models.StateView,
        responses=ERRORS,
        tags=["hands"],
    )
    def hand_state(
        run: RunName,
        hand: HandId,
        step: Annotated[
            int | None,
            Query(
                ge=-100_000,
                le=100_000,
                description="Decisions applied (0: after the deal; negative: from the end;"
                " default: the end).",
            ),
            SIGNED,
        ] = None,
        seat: Annotated[
            int | None, Query(ge=0, le=3, description="Only what this seat sees."), DIGITS
        ] = None,
    ) -> Response:
        """The table at ``step`` from ``seat``'s view: ``paohuzi replay RUN HAND --step K
        --seat S --format json``."""
        from replay.replayer.hand import load_hand, replayer_at
        from replay.replayer.views import state_view

        st = store()
        known(st, run)
        log = load_hand(st, run, hand)
        rp = replayer_at(log, step, seat)
        return JSONResponse(state_view(rp.state, seat, log=log))

    # -----------------------------------------------------------------------------------------
    # Ingest
    # -----------------------------------------------------------------------------------------

    bearer = HTTPBearer(
        auto_error=False,
        description="The ingest token (PAOHUZI_INGEST_TOKEN or --ingest-token-file).",
    )
    token = None if ingest_token is None else ingest_token.encode("utf-8")

    ingesting = [0]  # ingests being received, parsed or verified now

    @app.post(
        "/runs/{run}/hands",
        response_model=models.IngestAnswer,
        responses=INGEST_ERRORS,
        openapi_extra={"requestBody": INGEST_BODY},
        tags=["ingest"],
    )
    async def ingest(
        request: Request,
        run: RunName,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> JSONResponse:
        """Verify replay files and add the hands that pass to the run of imported hands
        ``run`` (made if new): one file (``application/json``, or its text spelling as
        ``text/plain``) or a JSON-lines batch (``application/x-ndjson``), with the ingest
        token as a bearer token. Each file is answered in input order, accepted (its hand
        id) or refused (why); the accepted ones are one new shard, as ``paohuzi import``
        writes it. 403 when the service has no ingest token, 401 without the right one, 422
        for a one-file body that is no replay file at all."""
        from replay.store.layout import check_run_name

        if token is None:
            raise _Refusal(403, INGEST_DISABLED)
        given = b"" if credentials is None else credentials.credentials.encode("utf-8")
        if not hmac.compare_digest(given, token):
            raise _Refusal(
                401,
                "the ingest needs the service's token: Authorization: Bearer TOKEN",
                {"WWW-Authenticate": "Bearer"},
            )
        try:
            check_run_name(run)
        except PaohuziError as e:
            raise ApiError(422, f"path parameter run: {e}") from None
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media not in INGEST_MEDIA:
            raise ApiError(415, f"content type {media or 'none'!r} is not one of "
                           + ", ".join(INGEST_MEDIA))  # fmt: skip
        # each ingest holds its body: at most ingest_at_once at a time, the others wait
        # (their bodies unread) as they wait for a busy run's lock, then 503
        deadline = time.monotonic() + lim.ingest_lock_seconds
        while ingesting[0] >= lim.ingest_at_once:
            if time.monotonic() >= deadline:
                raise _Refusal(
                    503,
                    f"{lim.ingest_at_once} ingests are being received or verified (waited"
                    f" {lim.ingest_lock_seconds:g} s); try again (raise it with paohuzi serve"
                    " --ingest-at-once)",
                    {"Retry-After": "1"},
                )
            await asyncio.sleep(0.02)
        ingesting[0] += 1  # one event loop: no lock needed
        try:
            try:
                body = await asyncio.wait_for(
                    _bounded_body(request, lim.ingest_bytes), lim.ingest_body_seconds
                )
            except TimeoutError:
                raise ApiError(
                    408,
                    f"the request body did not arrive within {lim.ingest_body_seconds:g} s"
                    " (raise it with paohuzi serve --ingest-body-seconds)",
                ) from None
            # parsing 64 MB of replay files takes seconds: in the thread pool, as the
            # verifying, so that the event loop answers other requests meanwhile
            return await run_in_threadpool(add_body, run, media, body)
        finally:
            ingesting[0] -= 1

    def add_body(run: str, media: str, body: bytes) -> JSONResponse:
        """The ingest of ``body`` (of type ``media``) into ``run``: its answer."""
        from replay.replayer import exchange

        if media == NDJSON:
            hint = "raise it with paohuzi serve --ingest-lines / --ingest-line-bytes"
            try:
                items = exchange.parse_jsonl(
                    body, "", lim.ingest_lines, lim.ingest_line_bytes, hint
                )
            except exchange.ReplayFileError as e:
                raise ApiError(413, str(e)) from None
            if not items:
                raise ApiError(400, "no replay file in the request (one JSON object per line)")
        else:
            items = [exchange.parse_item(body, "request body")]
            bad = items[0].error
            if bad is not None and bad.reason == "malformed":  # the request is no replay file
                raise ApiError(422, " ".join(str(bad).split()))

        res = exchange.add_hands(
            root,
            items,
            run,
            ["POST", f"/runs/{run}/hands"],
            lock_wait=lim.ingest_lock_seconds,
            origin=f"POST /runs/{run}/hands",
            duplicate_hint="",
        )
        answer = res.to_dict()
        answer["run"] = run
        for h in answer["hands"]:
            if h["error"] is not None:
                h["error"] = say(h["error"])
        if answer["catalog_problem"] is not None:
            answer["catalog_problem"] = say(answer["catalog_problem"])
        return JSONResponse(answer)

    # -----------------------------------------------------------------------------------------
    # Statistics
    # -----------------------------------------------------------------------------------------

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

        st = store()
        names = list(dict.fromkeys(run))
        for name in names:
            known(st, name)
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

        payload = stats_payload(timed(st, work))
        payload["warnings"] = [say(w) for w in warnings]
        return JSONResponse(payload)

    return app


class _Refusal(Exception):
    """An ingest refused before its body is read: 401 (with ``WWW-Authenticate``) or 403."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


INGEST_DISABLED = (
    "ingest disabled: this service was started without an ingest token"
    " (PAOHUZI_INGEST_TOKEN or paohuzi serve --ingest-token-file)"
)

NDJSON = "application/x-ndjson"

#: The request bodies the ingest reads.
INGEST_MEDIA = ("application/json", "text/plain", NDJSON)

INGEST_BODY: dict[str, Any] = {
    "required": True,
    "description": "One replay file (docs/REPLAY_FILE.md), or a JSON-lines batch of them.",
    "content": {
        "application/json": {
            "schema": {"type": "object", "description": "A replay file, JSON spelling."}
        },
        "text/plain": {"schema": {"type": "string", "description": "A replay file, text."}},
        NDJSON: {"schema": {"type": "string", "description": "One JSON replay file per line."}},
    },
}

#: The error answers of the ingest.
INGEST_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": models.ErrorBody, "description": "No replay file in the request."},
    401: {"model": models.ErrorBody, "description": "No token, or not the service's."},
    403: {"model": models.ErrorBody, "description": "Ingest disabled: no token configured."},
    409: {"model": models.ErrorBody, "description": "The run is a simulated run."},
    413: {"model": models.ErrorBody, "description": "More bytes or lines than the limits."},
    408: {"model": models.ErrorBody, "description": "The body took too long to arrive."},
    415: {"model": models.ErrorBody, "description": "Not JSON, text or JSON lines."},
    422: {
        "model": models.ErrorBody,
        "description": "Not a run name, or a one-file body that is not a replay file.",
    },
    503: {
        "model": models.ErrorBody,
        "description": "The run's lock was held too long, or too many ingests at once.",
    },
}


async def _bounded_body(request: Request, max_bytes: int) -> bytes:
    """The request's body, at most ``max_bytes`` (413 beyond: a declared length is refused
    before anything is read, a stream as soon as it passes the limit)."""
    declared = request.headers.get("content-length", "")
    too_big = ApiError(
        413,
        f"the request is larger than {max_bytes:,} bytes, the limit of an ingest"
        " (raise it with paohuzi serve --ingest-bytes)",
    )
    if declared.isdigit() and int(declared) > max_bytes:
        raise too_big
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)


def filter_names() -> tuple[list[str], list[str]]:
    """The values of the ``outcome`` and ``mingtang`` filters: the outcome names, and the
    名堂 pinyin ids then their names (what :func:`replay.store.manage.outcome_code` and
    :func:`~replay.store.manage.mingtang_mask` read; the API takes them spelled so)."""
    from engine.mingtang import REGISTRY
    from engine.state import OutcomeKind
    from replay.record.schema import MINGTANG_BITS

    names = list(MINGTANG_BITS)
    names += sorted({REGISTRY[p].name for p in MINGTANG_BITS})
    return [k.name.lower() for k in OutcomeKind], names


def _one_of(names: list[str]) -> str:
    return "^(?:" + "|".join(re.escape(n) for n in names) + ")$"


def _line(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"
