"""Verified ingest: ``POST /runs/{run}/hands`` adds the hands of replay files that pass to
the run of imported hands (:func:`replay.replayer.importing.import_hands`, the one import path),
with the service's token; bounded in bytes, lines, body time and ingests at once."""

# No ``from __future__ import annotations``: FastAPI reads the endpoint's annotations.

import asyncio
import hmac
import time
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from engine.errors import PaohuziError
from paohuzi.service import models
from paohuzi.service.context import Context, RunName
from paohuzi.service.errors import ApiError, Refusal


def add(app: FastAPI, ctx: Context) -> None:
    """``POST /runs/{run}/hands`` on ``app`` (403 when ``ctx`` has no token)."""
    lim, token = ctx.lim, ctx.token

    bearer = HTTPBearer(
        auto_error=False,
        description="The ingest token (PAOHUZI_INGEST_TOKEN or --ingest-token-file).",
    )

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
            raise Refusal(403, INGEST_DISABLED)
        given = b"" if credentials is None else credentials.credentials.encode("utf-8")
        if not hmac.compare_digest(given, token):
            raise Refusal(
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
                raise Refusal(
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
        from replay.replayer import importing, replay_file

        if media == NDJSON:
            hint = "raise it with paohuzi serve --ingest-lines / --ingest-line-bytes"
            try:
                items = importing.parse_jsonl(
                    body, "", lim.ingest_lines, lim.ingest_line_bytes, hint
                )
            except replay_file.ReplayFileError as e:
                raise ApiError(413, str(e)) from None
            if not items:
                raise ApiError(400, "no replay file in the request (one JSON object per line)")
        else:
            items = [importing.parse_item(body, "request body")]
            bad = items[0].error
            if bad is not None and bad.reason == "malformed":  # the request is no replay file
                raise ApiError(422, " ".join(str(bad).split()))

        res = importing.import_hands(
            ctx.root,
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
                h["error"] = ctx.say(h["error"])
        if answer["catalog_problem"] is not None:
            answer["catalog_problem"] = ctx.say(answer["catalog_problem"])
        return JSONResponse(answer)


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
