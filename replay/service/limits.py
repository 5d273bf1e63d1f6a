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


@dataclass(frozen=True)
class Limits:
    """Every bound of the service."""

    page_default: int = PAGE_DEFAULT
    page_max: int = PAGE_MAX
    stream_default: int = STREAM_DEFAULT
    stream_max: int = STREAM_MAX
    query_seconds: float = QUERY_SECONDS
    stats_runs_max: int = STATS_RUNS_MAX

    def __post_init__(self) -> None:
        for name in ("page_max", "stream_max", "stats_runs_max"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if not self.query_seconds > 0:
            raise ValueError(f"query_seconds must be more than 0, not {self.query_seconds}")
        # a default above its maximum is lowered to it (``--page-max 10`` alone is enough)
        object.__setattr__(self, "page_default", max(1, min(self.page_default, self.page_max)))
        object.__setattr__(
            self, "stream_default", max(1, min(self.stream_default, self.stream_max))
        )
