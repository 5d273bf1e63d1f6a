"""Importing hands: ``POST /runs/{run}/hands`` adds the hands of replay files that pass to
the run of imported hands (:func:`replay.record.importing.import_hands`, the one import
path, as ``paohuzi import``), with the service's import token; bounded in bytes, lines, body
time and imports at once.

The route in steps: the token (:func:`_check_token`), the run's name and the body's type
(:func:`_check_request`), a slot among the imports at once (:class:`_Slots`), the body
(:func:`_receive`), then, in the thread pool, its replay files (:func:`_items`) imported
(:func:`_import_body`)."""

# No ``from __future__ import annotations``: FastAPI reads the endpoint's annotations.

import asyncio
import contextlib
import hmac
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from engine.errors import PaohuziError
from paohuzi.service import models
from paohuzi.service.context import Context, RunName
from paohuzi.service.errors import ApiError, Refusal
from paohuzi.service.limits import Limits

#: The route's names in the OpenAPI document, from the time importing was called ingest:
#: kept, since a client generated from the document names its method and group after them.
OPERATION_ID = "ingest_runs__run__hands_post"
TAG = "ingest"


def add(app: FastAPI, ctx: Context) -> None:
    """``POST /runs/{run}/hands`` on ``app`` (403 when ``ctx`` has no token)."""
    bearer = HTTPBearer(
        auto_error=False,
        description="The import token (PAOHUZI_IMPORT_TOKEN or --import-token-file).",
    )
    slots = _Slots(ctx.lim)

    @app.post(
        "/runs/{run}/hands",
        response_model=models.IngestAnswer,
        responses=IMPORT_ERRORS,
        openapi_extra={"requestBody": IMPORT_BODY},
        tags=[TAG],
        operation_id=OPERATION_ID,
        summary="Import",
    )
    async def import_hands(
        request: Request,
        run: RunName,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> JSONResponse:
        """Verify replay files and add the hands that pass to the run of imported hands
        ``run`` (made if new): one file (``application/json``, or its text spelling as
        ``text/plain``) or a JSON-lines batch (``application/x-ndjson``), with the import
        token as a bearer token. Each file is answered in input order, accepted (its hand
        id) or refused (why); the accepted ones are one new shard, as ``paohuzi import``
        writes it. 403 when the service has no import token, 401 without the right one, 422
        for a one-file body that is no replay file at all."""
        _check_token(ctx.token, credentials)
        media = _check_request(run, request)
        async with slots.held():
            body = await _receive(request, ctx.lim)
            # parsing 64 MB of replay files takes seconds: in the thread pool, as the
            # verifying, so that the event loop answers other requests meanwhile
            return await run_in_threadpool(_import_body, ctx, run, media, body)


def _check_token(token: bytes | None, credentials: HTTPAuthorizationCredentials | None) -> None:
    """403 when the service has no import token, 401 unless the request bears it."""
    if token is None:
        raise Refusal(403, IMPORT_DISABLED)
    given = b"" if credentials is None else credentials.credentials.encode("utf-8")
    if not hmac.compare_digest(given, token):
        raise Refusal(
            401,
            "the import needs the service's token: Authorization: Bearer TOKEN",
            {"WWW-Authenticate": "Bearer"},
        )


def _check_request(run: str, request: Request) -> str:
    """422 for a name no run may have, 415 for a body the import does not read; the body's
    media type."""
    from replay.store.layout import check_run_name

    try:
        check_run_name(run)
    except PaohuziError as e:
        raise ApiError(422, f"path parameter run: {e}") from None
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in IMPORT_MEDIA:
        raise ApiError(415, f"content type {media or 'none'!r} is not one of "
                       + ", ".join(IMPORT_MEDIA))  # fmt: skip
    return media


class _Slots:
    """The imports being received, parsed or verified now, each holding its body: at most
    ``lim.import_at_once``; one more waits (its body unread) as it would wait for a busy
    run's lock, ``lim.import_lock_seconds``, then 503."""

    def __init__(self, lim: Limits) -> None:
        self.lim = lim
        self.busy = 0

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        lim = self.lim
        deadline = time.monotonic() + lim.import_lock_seconds
        while self.busy >= lim.import_at_once:
            if time.monotonic() >= deadline:
                raise Refusal(
                    503,
                    f"{lim.import_at_once} imports are being received or verified (waited"
                    f" {lim.import_lock_seconds:g} s); try again (raise it with paohuzi serve"
                    " --import-at-once)",
                    {"Retry-After": "1"},
                )
            await asyncio.sleep(0.02)
        self.busy += 1  # one event loop: no lock needed
        try:
            yield
        finally:
            self.busy -= 1


async def _receive(request: Request, lim: Limits) -> bytes:
    """The request's body, within the import's bytes (413) and body time (408)."""
    try:
        return await asyncio.wait_for(
            _bounded_body(request, lim.import_bytes), lim.import_body_seconds
        )
    except TimeoutError:
        raise ApiError(
            408,
            f"the request body did not arrive within {lim.import_body_seconds:g} s"
            " (raise it with paohuzi serve --import-body-seconds)",
        ) from None


def _items(lim: Limits, media: str, body: bytes) -> list[Any]:
    """The replay files of ``body`` (of type ``media``), each parsed or refused: 413 for a
    batch of more files than the limit, 400 for one of none, 422 for a one-file body that
    is no replay file at all."""
    from replay.replayer import importing

    if media == NDJSON:
        hint = "raise it with paohuzi serve --import-lines / --import-line-bytes"
        try:
            items = importing.parse_jsonl(body, "", lim.import_lines, lim.import_line_bytes, hint)
        except importing.ReplayFileError as e:
            raise ApiError(413, str(e)) from None
        if not items:
            raise ApiError(400, "no replay file in the request (one JSON object per line)")
        return items
    items = [importing.parse_item(body, "request body")]
    bad = items[0].error
    if bad is not None and bad.reason == "malformed":  # the request is no replay file
        raise ApiError(422, " ".join(str(bad).split()))
    return items


def _import_body(ctx: Context, run: str, media: str, body: bytes) -> JSONResponse:
    """The import of ``body`` (of type ``media``) into ``run``: its answer."""
    from replay.record.importing import import_hands
    from replay.replayer import importing

    res = import_hands(
        ctx.root,
        importing.ImportBatch(_items(ctx.lim, media, body)),
        run,
        ["POST", f"/runs/{run}/hands"],
        lock_wait=ctx.lim.import_lock_seconds,
        origin=f"POST /runs/{run}/hands",
        duplicate_hint="",
    )
    answer = res.to_dict()
    answer["run"] = run
    for h in answer["hands"]:
        if h["error"] is not None:
            h["error"] = ctx.say(h["error"])
    if answer["catalog_problem"] is not None:
        answer["catalog_problem"] = ctx.say(answer["catalog_problem"])
    return JSONResponse(answer)


IMPORT_DISABLED = (
    "import disabled: this service was started without an import token"
    " (PAOHUZI_IMPORT_TOKEN or paohuzi serve --import-token-file)"
)

NDJSON = "application/x-ndjson"

#: The request bodies the import reads.
IMPORT_MEDIA = ("application/json", "text/plain", NDJSON)

IMPORT_BODY: dict[str, Any] = {
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

#: The error answers of the import.
IMPORT_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": models.ErrorBody, "description": "No replay file in the request."},
    401: {"model": models.ErrorBody, "description": "No token, or not the service's."},
    403: {"model": models.ErrorBody, "description": "Import disabled: no token configured."},
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
        "description": "The run's lock was held too long, or too many imports at once.",
    },
}


async def _bounded_body(request: Request, max_bytes: int) -> bytes:
    """The request's body, at most ``max_bytes`` (413 beyond: a declared length is refused
    before anything is read, a stream as soon as it passes the limit)."""
    declared = request.headers.get("content-length", "")
    too_big = ApiError(
        413,
        f"the request is larger than {max_bytes:,} bytes, the limit of an import"
        " (raise it with paohuzi serve --import-bytes)",
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
