"""HTTP as the web expects it: an ``ETag`` and ``Cache-Control`` on every GET answer, ``304 Not
Modified`` for ``If-None-Match``, ``HEAD`` on every GET route, and the answers of ``/stats``
and ``/runs`` kept in memory per store generation (docs/SERVICE.md, "Conditional requests").

One ASGI middleware (:class:`Revalidate`) around the app:

* For a GET or HEAD it takes the store's state first (:class:`~replay.store.snapshot.LiveStore`:
  a few ``stat`` calls per run when nothing changed) and pins it for the request
  (:data:`paohuzi.service.context.PINNED`), so that the answer and its tag name one state.
* The ``ETag`` is a digest of that state's generation, the code's version and the
  normalised request (path and query, the query's pairs in their order): the same request
  on the same state gives the same bytes and the same tag; any change of the store (a run
  added, removed, resumed, damaged) changes every tag, so 304 is never answered for a
  changed store. ``Cache-Control: no-cache``: a client may keep an answer, and asks again
  with ``If-None-Match`` before using it.
* ``If-None-Match`` naming the current tag (or ``*``) gets 304 at once, on the event loop:
  no thread, no query.
* A 200 answer of ``/stats`` or ``/runs`` (at most :data:`ANSWER_MAX_BYTES`) is kept, at most
  :data:`ANSWERS_MAX` of them, least recently used first out; a request for a kept answer is
  answered on the event loop, so it never waits behind a slow query, which runs in the
  thread pool.
* ``HEAD`` is answered as the GET would be (same status and headers), without the body.

Errors (4xx, 5xx) carry no tag and are never kept.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from typing import Any
from urllib.parse import parse_qsl, urlencode

from anyio import to_thread

from paohuzi.service.context import PINNED, Context
from replay.version import package_version

#: Answers kept per process (all generations together; the oldest used goes first).
ANSWERS_MAX = 256
#: The largest answer kept (a /stats of many runs may be larger: it is computed each time).
ANSWER_MAX_BYTES = 4 << 20
#: The routes whose answers are kept.
KEPT_PATHS = frozenset({"/stats", "/runs"})
CACHE_CONTROL = b"no-cache"


def normalised(scope: dict[str, Any]) -> str:
    """The request as its tag names it: the path, and the query's pairs re-encoded in their
    order (``run=a&run=b`` is not ``run=b&run=a``: /stats answers in the order named)."""
    query = scope.get("query_string", b"").decode("latin-1")
    pairs = parse_qsl(query, keep_blank_values=True)
    return f"{scope.get('path', '')}?{urlencode(pairs)}"


@functools.cache
def _version() -> str:
    return package_version()  # read from the package's metadata: 0.3 ms, once


def etag(generation: str, request: str) -> str:
    """The strong validator of ``request`` on the store at ``generation``."""
    h = hashlib.sha256(f"{generation}\0{_version()}\0{request}".encode())
    return f'"{h.hexdigest()[:32]}"'


def matches(header: str, tag: str) -> bool:
    """Whether an ``If-None-Match`` value names ``tag`` (weak comparison, RFC 9110 §13.1.2)."""
    if header.strip() == "*":
        return True
    return any(t.strip().removeprefix("W/") == tag for t in header.split(","))


class Answers:
    """The kept answers: tag → (status, headers, body), bounded, least recently used out."""

    def __init__(self, limit: int = ANSWERS_MAX) -> None:
        self.limit = limit
        self._items: OrderedDict[str, tuple[int, list[tuple[bytes, bytes]], bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, tag: str) -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
        with self._lock:
            got = self._items.get(tag)
            if got is not None:
                self._items.move_to_end(tag)
            return got

    def put(self, tag: str, answer: tuple[int, list[tuple[bytes, bytes]], bytes]) -> None:
        with self._lock:
            self._items[tag] = answer
            self._items.move_to_end(tag)
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
        live = self.ctx.live
        state = live.fresh()
        if state is None:  # something moved: rescan off the event loop
            state = await to_thread.run_sync(live.state)
        tag = etag(state.signature, normalised(scope))
        tag_b = tag.encode()
        inm = _header(scope, b"if-none-match")
        if inm is not None and matches(inm, tag):
            await _send(send, 304, [(b"etag", tag_b), (b"cache-control", CACHE_CONTROL)], b"")
            return
        keep = scope.get("path") in KEPT_PATHS
        if keep:
            kept = self.answers.get(tag)
            if kept is not None:
                status, headers, body = kept
                await _send(send, status, headers, b"" if head else body)
                return
        token = PINNED.set(state)
        try:
            await self.app(
                scope, receive, _Tagging(send, tag_b, head, self.answers if keep else None, tag)
            )
        finally:
            PINNED.reset(token)


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    values = [v for k, v in scope.get("headers", []) if k.lower() == name]
    return b", ".join(values).decode("latin-1") if values else None


async def _send(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class _Tagging:
    """``send`` with the tag and Cache-Control added to a 200 answer, the body dropped for
    HEAD, and a kept route's answer kept."""

    def __init__(
        self, send: Any, tag: bytes, head: bool, answers: Answers | None, key: str
    ) -> None:
        self.send, self.tag, self.head, self.answers, self.key = send, tag, head, answers, key
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] | None = []
        self.size = 0

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
            headers = list(message.get("headers", []))
            if self.status == 200:
                headers += [(b"etag", self.tag), (b"cache-control", CACHE_CONTROL)]
            self.headers = headers
            message = dict(message, headers=headers)
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            if self.answers is not None and self.status == 200 and self.body is not None:
                self.size += len(body)
                if self.size > ANSWER_MAX_BYTES:
                    self.body = None
                else:
                    self.body.append(body)
                    if not message.get("more_body", False):
                        self.answers.put(self.key, (200, self.headers, b"".join(self.body)))
            if self.head:
                message = dict(message, body=b"")
        await self.send(message)
