"""HTTP as the web expects it: an ``ETag`` and ``Cache-Control`` on every whole GET answer,
``304 Not Modified`` for ``If-None-Match``, ``HEAD`` on every GET route, and the answers of
``/stats`` and ``/runs`` kept in memory per store generation (docs/SERVICE.md, "Conditional
requests").

One ASGI middleware (:class:`Revalidate`) around the app:

* For a GET or HEAD of a route that reads the store it takes the store's state first
  (:class:`~replay.store.snapshot.LiveStore`: a few ``stat`` calls per run when nothing
  changed) and pins it for the request (:data:`paohuzi.service.context.PINNED`).
* The ``ETag`` is a digest of the bytes sent (and their content type): a tag names one body
  and no other, whatever the store did meanwhile. ``Cache-Control: no-cache``: a client may
  keep an answer, and asks again with ``If-None-Match`` before using it.
* A conditional GET is answered as the plain one: the answer is made, and a 200 whose tag
  ``If-None-Match`` names (or ``*``) is sent as 304, without its body; any other status (a
  missing run, a bad parameter, a shard found damaged) is sent as it is, without a tag.
* A streamed answer (the ndjson export: its route says ``Cache-Control: no-store``, or any
  answer whose body comes in pieces) carries no tag and never gets a 304: its headers leave
  before its body, which an error may cut, so no validator can vouch for it.
* A 200 answer of ``/stats`` or ``/runs`` (at most :data:`ANSWER_MAX_BYTES`) is kept under
  the state's generation and the request, at most :data:`ANSWERS_MAX` of them, least
  recently used first out; a request for a kept answer (plain or conditional) is answered
  from it on the event loop, so it never waits behind a slow query, which runs in the
  thread pool.
* ``HEAD`` is answered as the GET would be (same status and headers), without the body.

Errors (4xx, 5xx) carry no tag and are never kept.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any
from urllib.parse import parse_qsl, urlencode

from anyio import to_thread

from paohuzi.service.context import PINNED, Context

#: Answers kept per process (all generations together; the oldest used goes first).
ANSWERS_MAX = 256
#: The largest answer kept (a /stats of many runs may be larger: it is computed each time).
ANSWER_MAX_BYTES = 4 << 20
#: The routes whose answers are kept.
KEPT_PATHS = frozenset({"/stats", "/runs"})
#: The routes that read nothing of the store: no state is taken for them (``/health``, a
#: liveness probe, never waits for a rescan).
STORELESS_PATHS = frozenset(
    {"/health", "/version", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}
)
#: Paths under which nothing reads the store either (the docs pages' files).
STORELESS_PREFIXES = ("/docs/assets/",)
CACHE_CONTROL = b"no-cache"
#: A streamed answer's: not kept, there is no validator to revalidate it by.
NO_STORE = "no-store"

Answer = tuple[int, list[tuple[bytes, bytes]], bytes]


def normalised(scope: dict[str, Any]) -> str:
    """The request as its kept answer is keyed: the path, and the query's pairs re-encoded
    in their order (``run=a&run=b`` is not ``run=b&run=a``: /stats answers in the order
    named)."""
    query = scope.get("query_string", b"").decode("latin-1")
    pairs = parse_qsl(query, keep_blank_values=True)
    return f"{scope.get('path', '')}?{urlencode(pairs)}"


def etag(headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    """The strong validator of an answer: a digest of its content type and its bytes.

    >>> etag([(b"content-type", b"application/json")], b"{}")
    b'"2f899668f4040d7b8822b5019944efd8"'
    """
    h = hashlib.sha256(_header_value(headers, b"content-type") + b"\0")
    h.update(body)
    return b'"' + h.hexdigest()[:32].encode() + b'"'


def matches(header: str, tag: str) -> bool:
    """Whether an ``If-None-Match`` value names ``tag``, the tag of a representation that
    exists (weak comparison, RFC 9110 §13.1.2: ``*`` matches any)."""
    names = [t.strip() for t in header.split(",")]
    return any(t == "*" or t.removeprefix("W/") == tag for t in names)


class Answers:
    """The kept answers: key → (status, headers, body), bounded, least recently used out."""

    def __init__(self, limit: int = ANSWERS_MAX) -> None:
        self.limit = limit
        self._items: OrderedDict[tuple[str, str], Answer] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> Answer | None:
        with self._lock:
            got = self._items.get(key)
            if got is not None:
                self._items.move_to_end(key)
            return got

    def put(self, key: tuple[str, str], answer: Answer) -> None:
        with self._lock:
            self._items[key] = answer
            self._items.move_to_end(key)
            while len(self._items) > self.limit:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class Revalidate:
    """The middleware (module docstring) of the service over ``ctx``'s store."""

    def __init__(self, app: Any, ctx: Context, answers: Answers | None = None) -> None:
        self.app = app
        self.ctx = ctx
        self.answers = answers if answers is not None else Answers()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        head = scope["method"] == "HEAD"
        if head:
            scope = dict(scope, method="GET")
        inm = _header(scope, b"if-none-match")
        path = scope.get("path") or ""
        if path in STORELESS_PATHS or path.startswith(STORELESS_PREFIXES):
            await self.app(scope, receive, _Tagging(send, head, inm))
            return
        live = self.ctx.live
        state = live.fresh()
        if state is None:  # something moved: rescan off the event loop
            state = await to_thread.run_sync(live.state)
        key = None
        if scope.get("path") in KEPT_PATHS:
            key = (state.signature, normalised(scope))
            kept = self.answers.get(key)
            if kept is not None:
                await _answer(send, kept, head, inm)
                return
        token = PINNED.set(state)
        try:
            kept_in = (self.answers, key) if key is not None else None
            await self.app(scope, receive, _Tagging(send, head, inm, kept_in))
        finally:
            PINNED.reset(token)


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    values = [v for k, v in scope.get("headers", []) if k.lower() == name]
    return b", ".join(values).decode("latin-1") if values else None


def _header_value(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes:
    return next((v for k, v in headers if k.lower() == name), b"")


async def _answer(send: Any, answer: Answer, head: bool, inm: str | None) -> None:
    """A whole tagged answer: 304 if ``If-None-Match`` names its tag, else itself (its
    body dropped for HEAD)."""
    status, headers, body = answer
    tag = _header_value(headers, b"etag")
    if inm is not None and matches(inm, tag.decode("latin-1")):
        status, headers, body = 304, [(b"etag", tag), (b"cache-control", CACHE_CONTROL)], b""
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body, "more_body": False})


class _Tagging:
    """``send`` for the app's answer: a 200 whose body comes whole is held until then,
    tagged (a 304 instead when ``inm`` names its tag) and, with ``kept``, kept; a streamed
    one is sent as it comes, untagged, ``no-store``; any other status as it is. The body is
    dropped for HEAD."""

    def __init__(
        self,
        send: Any,
        head: bool,
        inm: str | None,
        kept: tuple[Answers, tuple[str, str]] | None = None,
    ) -> None:
        self.send, self.head, self.inm, self.kept = send, head, inm, kept
        self.start: dict[str, Any] | None = None  # a 200's start, held for its body

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            # an error, or a stream by the route's word (its Cache-Control), passes as it is
            if message["status"] == 200 and not _header_value(headers, b"cache-control"):
                self.start = dict(message, headers=headers)
                return
        elif message["type"] == "http.response.body" and self.start is not None:
            start, self.start = self.start, None
            if message.get("more_body", False):  # a body in pieces: a stream
                headers = [*start["headers"], (b"cache-control", NO_STORE.encode())]
                await self.send(dict(start, headers=headers))
            else:
                body = message.get("body", b"")
                tag = etag(start["headers"], body)
                headers = [*start["headers"], (b"etag", tag), (b"cache-control", CACHE_CONTROL)]
                answer = (200, headers, body)
                if self.kept is not None and len(body) <= ANSWER_MAX_BYTES:
                    answers, key = self.kept
                    answers.put(key, answer)
                await _answer(self.send, answer, self.head, self.inm)
                return
        if self.head and message["type"] == "http.response.body":
            message = dict(message, body=b"")
        await self.send(message)
