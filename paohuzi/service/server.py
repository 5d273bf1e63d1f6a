"""The HTTP server under the API (``paohuzi serve``): uvicorn with its h11 protocol held to
the service's connection limits (docs/SERVICE.md, "Limits"), and answering as the API
does, ``{"error": "one line"}``, where uvicorn would answer in plain text.

uvicorn (0.55) closes an idle keep-alive connection (``timeout_keep_alive``), but nothing
bounds the time a request's head takes to arrive: a client that opens a connection and
sends nothing, or sends its headers a byte at a time, holds it for ever. h11 refuses a head
larger than its buffer only when the head comes in pieces (one read of a larger head
passes), and uvicorn answers that, a malformed request and one past ``limit_concurrency``
in plain text. :class:`Protocol` (h11, even where httptools is installed) adds:

* **a head deadline**: from a connection's start, and from the first byte after an
  answer, a request's head (request line and headers) must be complete within
  ``header_seconds``; else 408 (or, when nothing came, the connection is closed);
* **a head size** of at most ``header_bytes`` for every request, in pieces or not (431);
* **at most** ``max_connections`` connections served at once (503 for a request on any
  other, as uvicorn's ``limit_concurrency``), but for ``/health``, answered on any;
* those answers and h11's 400 as JSON.

A request being answered is the app's (its body, its time limit); the deadline starts again
when its answer ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import socket
from collections.abc import Callable
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from paohuzi.service.errors import one_line
from paohuzi.service.limits import Limits

#: Paths answered past ``max_connections``: the liveness probe, so that slow or idle
#: connections filling the limit do not make the service look dead.
UNLIMITED_PATHS = frozenset({"/health"})


def error_response(status: int, message: str) -> bytes:
    """A whole HTTP/1.1 answer ``{"error": message}`` that closes the connection.

    >>> print(error_response(408, "late").decode())  # doctest: +NORMALIZE_WHITESPACE
    HTTP/1.1 408 Request Timeout
    content-type: application/json
    content-length: 16
    connection: close
    <BLANKLINE>
    {"error":"late"}
    """
    body = _json_error(message)
    head = (
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def _json_error(message: str) -> bytes:
    # spelled as the app's JSONResponse spells it
    obj = {"error": one_line(message)}
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def head_bytes(event: h11.Request) -> int:
    """The bytes of a request's head as sent (its line, headers and the blank line)."""
    line = len(event.method) + len(event.target) + len(b"  HTTP/1.1\r\n")
    return line + sum(len(k) + len(v) + 4 for k, v in event.headers.raw_items()) + 2


class _Connection(h11.Connection):
    """h11's server side, which shows the protocol each request's head as it is read and
    keeps the error that ended the connection."""

    def __init__(self, max_head: int, on_head: Callable[[h11.Request], None]) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_head)
        self.on_head = on_head
        self.error: h11.RemoteProtocolError | None = None

    def next_event(self) -> Any:
        try:
            event = super().next_event()
            if isinstance(event, h11.Request):
                self.on_head(event)
        except h11.RemoteProtocolError as e:
            self.error = e
            raise
        return event


class Protocol(H11Protocol):
    """uvicorn's h11 protocol within :attr:`limits` (see the module); a subclass per
    service (:func:`protocol_class`)."""

    limits: ClassVar[Limits] = Limits()

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: Any,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.conn = self._h11 = _Connection(self.limits.header_bytes, self._on_head)
        self.limit_concurrency = None  # counted by _admit instead, which answers in JSON
        self._app = self.app
        self.app = self._admit
        self._head_timer: asyncio.TimerHandle | None = None

    # The head deadline ------------------------------------------------------------------

    def connection_made(  # type: ignore[override]
        self, transport: asyncio.Transport
    ) -> None:
        super().connection_made(transport)
        # An answer is written in two parts (its head, then its body): without TCP_NODELAY
        # the second waits for the client's delayed ACK of the first, 40 ms on a kept-alive
        # connection.
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and not self._answering():
            self._arm()  # the first byte after an answer: the next head's clock starts
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _answering(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _arm(self) -> None:
        self._head_timer = self.loop.call_later(self.limits.header_seconds, self._head_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self._answering():
            return
        pending, _ = self.conn.trailing_data
        if pending and self.conn.their_state is h11.IDLE:  # part of a head came: say so
            self.transport.write(
                error_response(
                    408,
                    f"the request's head did not arrive within {self.limits.header_seconds:g} s"
                    " (paohuzi serve --header-seconds)",
                )
            )
        self.transport.close()

    def _on_head(self, event: h11.Request) -> None:
        self._disarm()
        if head_bytes(event) > self.limits.header_bytes:
            raise h11.RemoteProtocolError("head too large", error_status_hint=431)

    # JSON answers -----------------------------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        err = self._h11.error
        status = err.error_status_hint if err is not None else 400
        if status == 431:
            text = (
                f"the request's head (request line and headers) is larger than"
                f" {self.limits.header_bytes:,} bytes, the limit"
                " (paohuzi serve --header-bytes)"
            )
        else:
            status = status if 400 <= status < 500 else 400
            text = f"not an HTTP/1.1 request: {err if err is not None else msg}"
        self.transport.write(error_response(status, text))
        self.transport.close()

    async def _admit(self, scope: Any, receive: Any, send: Any) -> None:
        """The app, or 503 when more connections (or requests) than the limit are open;
        ``/health``, the liveness probe, is answered whatever the connections (it reads
        nothing of the store: one ``stat``)."""
        most = self.limits.max_connections
        within = len(self.connections) <= most and len(self.tasks) <= most
        if within or scope.get("path") in UNLIMITED_PATHS:
            await self._app(scope, receive, send)
            return
        self.logger.warning("more than %d connections: 503", most)
        body = _json_error(
            f"the service is busy: more than {most:,} connections"
            " (paohuzi serve --max-connections); try again"
        )
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode("ascii")),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def protocol_class(limits: Limits) -> type[Protocol]:
    """:class:`Protocol` within ``limits``."""
    return type("Protocol", (Protocol,), {"limits": limits})


def config(app: Any, limits: Limits) -> uvicorn.Config:
    """uvicorn's settings for the API ``app`` within ``limits``."""
    return uvicorn.Config(
        app,
        http=protocol_class(limits),
        log_level="warning",
        timeout_keep_alive=limits.keep_alive_seconds,  # uvicorn's own: an idle connection
        ws="none",  # the API has no WebSocket: an Upgrade header is ignored
    )


def run(app: Any, sock: socket.socket, limits: Limits) -> None:
    """Serve ``app`` on the listening socket ``sock`` until a signal stops it."""
    uvicorn.Server(config(app, limits)).run(sockets=[sock])
