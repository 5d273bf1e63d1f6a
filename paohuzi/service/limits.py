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
#: replay.replayer.importing.BATCH_BYTES, BATCH_LINES, LINE_BYTES), and the seconds a request
#: waits for the run's lock while another import into the run writes.
IMPORT_BYTES = 64 << 20
IMPORT_LINES = 10_000
IMPORT_LINE_BYTES = 1 << 20
IMPORT_LOCK_SECONDS = 30.0
#: Imports received, parsed and verified at once (each holds its body, up to IMPORT_BYTES:
#: 503 with Retry-After for one more), and the seconds a request's body may take to arrive
#: (408 after that).
IMPORT_AT_ONCE = 2
IMPORT_BODY_SECONDS = 120.0

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
    import_bytes: int = IMPORT_BYTES
    import_lines: int = IMPORT_LINES
    import_line_bytes: int = IMPORT_LINE_BYTES
    import_lock_seconds: float = IMPORT_LOCK_SECONDS
    import_at_once: int = IMPORT_AT_ONCE
    import_body_seconds: float = IMPORT_BODY_SECONDS
    header_bytes: int = HEADER_BYTES
    header_seconds: float = HEADER_SECONDS
    keep_alive_seconds: int = KEEP_ALIVE_SECONDS
    max_connections: int = MAX_CONNECTIONS

    def __post_init__(self) -> None:
        for name in (
            "page_max",
            "stream_max",
            "stats_runs_max",
            "import_bytes",
            "import_lines",
            "import_line_bytes",
            "header_bytes",
            "max_connections",
            "import_at_once",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        for name in (
            "query_seconds",
            "header_seconds",
            "keep_alive_seconds",
            "import_body_seconds",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be more than 0, not {getattr(self, name)}")
        if not self.import_lock_seconds >= 0:
            raise ValueError(
                f"import_lock_seconds must be at least 0, not {self.import_lock_seconds}"
            )
        # a default above its maximum is lowered to it (``--page-max 10`` alone is enough)
        object.__setattr__(self, "page_default", max(1, min(self.page_default, self.page_max)))
        object.__setattr__(
            self, "stream_default", max(1, min(self.stream_default, self.stream_max))
        )
