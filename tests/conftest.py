"""Suite-wide set-up: the compiled engine's kernels are compiled (or loaded from numba's
cache) once per worker before any test, under a lock, so parallel workers never compile the
same kernels at once (``make test`` has already done it in one process). And no test may
leave ``NUMBA_CACHE_DIR`` changed: every later process of its worker (a pool, a console
script) would look for the kernels elsewhere and compile the whole engine again. The modules
with costly module fixtures come first in the collection (:data:`FIRST`)."""

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


#: Modules whose tests share an expensive module fixture (a two-node Ray cluster; a dashboard
#: server and a browser), put first in the collection: xdist's worksteal deals the collection
#: out to the workers in contiguous parts and steals from their tails, so these run at the
#: head of the first worker's part, together, and each fixture starts once (spread over
#: three workers, the cluster started three times).
FIRST = ("replay/record/test_ray_backend.py", "dashboard/views/test_browser.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::")[0].removeprefix("tests/")
        return FIRST.index(path) if path in FIRST else len(FIRST)

    items.sort(key=rank)  # stable: every other test keeps its place
