"""The service's error answers: every failure is ``{"error": "one line"}`` with its status
(docs/SERVICE.md), never a traceback or a path of the server."""

# No ``from __future__ import annotations``: FastAPI reads the handlers' annotations.

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from engine.errors import PaohuziError, quote
from paohuzi.service.context import Context
from paohuzi.service.errors import ApiError, Refusal, one_line, status_of


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def install(app: FastAPI, ctx: Context) -> None:
    """The exception handlers of ``app``."""
    say = ctx.say

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
        if loc and loc[-1] in ctx.choices and first.get("type") == "string_pattern_mismatch":
            known = ", ".join(ctx.choices[loc[-1]])
            msg = f"unknown value {quote(first.get('input'))} (known: {known})"
        return error(422, say(f"{where}: {msg}"))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(r: Request, e: StarletteHTTPException) -> JSONResponse:
        text = "not found" if e.status_code == 404 else str(e.detail)
        headers = dict(e.headers or {})
        if e.status_code == 405:
            headers["Allow"] = allowed(app, r) or headers.get("Allow", "")
        # the request's path as sent: the client's words, not a path of the server to hide
        raw = r.scope.get("raw_path")
        path = raw.decode("latin-1") if isinstance(raw, bytes) else r.url.path
        message = one_line(f"{say(text)}: {r.method} {path}")
        return JSONResponse({"error": message}, status_code=e.status_code, headers=headers)

    @app.exception_handler(Refusal)
    async def _refusal(_r: Request, e: Refusal) -> JSONResponse:
        return JSONResponse({"error": say(e.message)}, status_code=e.status, headers=e.headers)

    @app.exception_handler(Exception)
    async def _internal(_r: Request, e: Exception) -> JSONResponse:
        import duckdb

        from replay.store.ducklimits import failure_line

        if isinstance(e, OSError | duckdb.Error):  # the store cannot be read: say why
            return error(500, say(f"cannot read the store: {failure_line(e)}"))
        return error(500, f"internal error ({type(e).__name__})")


def allowed(app: FastAPI, r: Request) -> str:
    """The methods of every route of the request's path (Starlette names one route's)."""
    methods: set[str] = set()
    for route in app.router.routes:
        match, _ = route.matches(r.scope)
        if match is not Match.NONE:
            methods |= getattr(route, "methods", None) or set()
    return ", ".join(sorted(methods))
