"""Suite-wide set-up: the compiled engine's kernels are compiled (or loaded from numba's
cache) once per worker before any test, under a lock, so parallel workers never compile the
same kernels at once (``make test`` has already done it in one process). And no test may
leave ``NUMBA_CACHE_DIR`` changed: every later process of its worker (a pool, a console
script) would look for the kernels elsewhere and compile the whole engine again."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _fast_engine_compiled() -> None:
    from engine.fast.warmup import warm_up

    warm_up(say=False)


@pytest.fixture(autouse=True)
def _numba_cache_dir_kept() -> Iterator[None]:
    before = os.environ.get("NUMBA_CACHE_DIR")
    yield
    after = os.environ.get("NUMBA_CACHE_DIR")
    assert after == before, f"the test left NUMBA_CACHE_DIR={after!r} (it was {before!r})"
