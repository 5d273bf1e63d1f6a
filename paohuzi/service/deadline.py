"""The per-request time limit on DuckDB work (``--query-seconds``).

DuckDB has no statement timeout; a :class:`Budget` arms a timer around each stretch of
DuckDB work that calls ``connection.interrupt()`` when the request's remaining seconds run
out. Only time inside DuckDB counts (a slow client reading the ndjson export does not).
The library then raises whatever it raises for a failed query; :attr:`Budget.spent` tells
the service that the cause was the limit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Budget:
    """``seconds`` of DuckDB work on the connection ``con``."""

    def __init__(self, con: Any, seconds: float) -> None:
        self.con = con
        self.seconds = seconds
        self.left = seconds
        self.spent = False

    def _interrupt(self) -> None:
        self.spent = True
        self.con.interrupt()

    @contextmanager
    def running(self) -> Iterator[None]:
        """Run the block under the remaining time: interrupted when it is up."""
        if self.left <= 0:
            self.spent = True
            raise TimeoutError(self.message)
        timer = threading.Timer(self.left, self._interrupt)
        timer.daemon = True
        start = time.monotonic()
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            self.left -= time.monotonic() - start

    @property
    def message(self) -> str:
        return f"the query took longer than the limit of {self.seconds:g} s (--query-seconds)"
