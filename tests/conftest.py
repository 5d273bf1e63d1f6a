"""Suite-wide set-up: the compiled engine's kernels are compiled (or loaded from numba's
cache) once per worker before any test, under a lock, so parallel workers never compile the
same kernels at once (``make test`` has already done it in one process)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _fast_engine_compiled() -> None:
    from engine.fast.warmup import warm_up

    warm_up(say=False)
