"""Sample sizes of the suite's statistical and randomized tests: the fewest their assertions
need under ``make test``, the full counts under ``make test-long`` (``PAOHUZI_TEST_LONG=1``),
which runs the same tests on more hands, examples and seeds."""

from __future__ import annotations

import os

#: Whether the long counts were asked for (``make test-long``).
LONG = os.environ.get("PAOHUZI_TEST_LONG", "") not in ("", "0")


def size(short: int, full: int) -> int:
    """``full`` under ``make test-long``, else ``short``."""
    return full if LONG else short
