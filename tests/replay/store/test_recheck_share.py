"""A long-lived reader's background recheck uses at most a tenth of a core: after a recheck
of d seconds it rests max(refresh, 9·d) (replay.store.snapshot.RECHECK_IDLE), so a 10⁸-hand
store, whose recheck stats 97,662 files, is not rechecked back to back every 2 s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replay.store import snapshot


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


class _Stop:
    """An event whose ``wait`` records its timeouts and ends the loop after three."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def wait(self, timeout: float) -> bool:
        self.waits.append(timeout)
        return len(self.waits) > 3

    def set(self) -> None:
        pass


@pytest.mark.parametrize(("took", "rests"), [(0.01, [0.5, 0.5, 0.5]), (1.0, [0.5, 9.0, 9.0])])
def test_the_recheck_rests_nine_times_its_duration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, took: float, rests: list[float]
) -> None:
    clock = _Clock()

    def slow_scan(*a: Any, **k: Any) -> Any:
        clock.now += took
        return snapshot.StoreState(str(tmp_path), True, (), "x")

    monkeypatch.setattr(snapshot.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(snapshot, "scan_store", slow_scan)
    monkeypatch.setattr(snapshot, "quick_signature", lambda root: "q")
    live = snapshot.LiveStore(tmp_path, refresh=0.5)
    stop = _Stop()
    live._stop = stop  # type: ignore[assignment]
    live._recheck()
    assert stop.waits == [*rests, pytest.approx(rests[-1])]
