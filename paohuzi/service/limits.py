"""The service's limits (docs/SERVICE.md), one value each, settable by ``paohuzi serve``'s
flags. No FastAPI here: ``paohuzi serve --help`` reads the defaults without importing it.

>>> Limits().page_max, Limits().stream_max
(1000, 100000)
>>> Limits(page_max=0)
Traceback (most recent call last):
...
ValueError: page_max must be at least 1, not 0
"""

from __future__ import annotations

from dataclasses import dataclass

#: ``GET /runs/{run}/hands``: ``limit`` when none is given, and its largest value.
PAGE_DEFAULT = 100
PAGE_MAX = 1000

#: ``GET /runs/{run}/hands.ndjson``: ``max`` when none is given, and its largest value.
STREAM_DEFAULT = 100_000
STREAM_MAX = 100_000

#: Seconds of DuckDB work one request may take (its queries are interrupted after that).
QUERY_SECONDS = 30.0

#: Runs one ``GET /stats`` may name.
STATS_RUNS_MAX = 100

#: Rows fetched from DuckDB at a time by the ndjson export.
STREAM_BATCH = 1000

#: ``POST /runs/{run}/hands``: the bytes of a request, the replay files of a JSON-lines
#: batch, the bytes of one line (``paohuzi import --jsonl``'s defaults too:
#: replay.replayer.exchange.BATCH_BYTES, BATCH_LINES, LINE_BYTES), and the seconds a request
#: waits for the run's lock while another ingest into the run writes.
INGEST_BYTES = 64 << 20
INGEST_LINES = 10_000
INGEST_LINE_BYTES = 1 << 20
INGEST_LOCK_SECONDS = 30.0
#: Ingests received, parsed and verified at once (each holds its body, up to INGEST_BYTES:
#: 503 with Retry-After for one more), and the seconds a request's body may take to arrive
#: (408 after that).
INGEST_AT_ONCE = 2
INGEST_BODY_SECONDS = 120.0

#: Connections (the server's, not the API's: paohuzi.service.server): the bytes of a
#: request's head (its request line and headers; 431 above), the seconds its head may take
#: to arrive from its first byte (or from the connection's start: 408, or the connection
#: closed when nothing came), the seconds an idle keep-alive connection is kept, and the
#: connections served at once (503 for a request on any beyond).
HEADER_BYTES = 16 << 10
HEADER_SECONDS = 10.0
KEEP_ALIVE_SECONDS = 5
MAX_CONNECTIONS = 256


@dataclass(frozen=True)
class Limits:
    """Every bound of the service."""

    page_default: int = PAGE_DEFAULT
    page_max: int = PAGE_MAX
    stream_default: int = STREAM_DEFAULT
    stream_max: int = STREAM_MAX
    query_seconds: float = QUERY_SECONDS
    stats_runs_max: int = STATS_RUNS_MAX
    ingest_bytes: int = INGEST_BYTES
    ingest_lines: int = INGEST_LINES
    ingest_line_bytes: int = INGEST_LINE_BYTES
    ingest_lock_seconds: float = INGEST_LOCK_SECONDS
    ingest_at_once: int = INGEST_AT_ONCE
    ingest_body_seconds: float = INGEST_BODY_SECONDS
    header_bytes: int = HEADER_BYTES
    header_seconds: float = HEADER_SECONDS
    keep_alive_seconds: int = KEEP_ALIVE_SECONDS
    max_connections: int = MAX_CONNECTIONS

    def __post_init__(self) -> None:
        for name in (
            "page_max",
            "stream_max",
            "stats_runs_max",
            "ingest_bytes",
            "ingest_lines",
            "ingest_line_bytes",
            "header_bytes",
            "max_connections",
            "ingest_at_once",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        for name in (
            "query_seconds",
            "header_seconds",
            "keep_alive_seconds",
            "ingest_body_seconds",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be more than 0, not {getattr(self, name)}")
        if not self.ingest_lock_seconds >= 0:
            raise ValueError(
                f"ingest_lock_seconds must be at least 0, not {self.ingest_lock_seconds}"
            )
        # a default above its maximum is lowered to it (``--page-max 10`` alone is enough)
        object.__setattr__(self, "page_default", max(1, min(self.page_default, self.page_max)))
        object.__setattr__(
            self, "stream_default", max(1, min(self.stream_default, self.stream_max))
        )
