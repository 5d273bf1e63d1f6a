"""``make bench-service``'s code path at a tiny size (200 hands, 2 clients, 1 s per phase):
it builds its stores, runs a server per store and reports figures for every phase — that
it reports them, not how fast they are."""

from __future__ import annotations

import json
from pathlib import Path

from bench import service


def test_the_benchmark_reports_every_phase(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    phases = service.main(["--data", str(tmp_path / "b"), "--hands", "200",
                           "--source-hands", "200", "--seconds", "1", "--clients", "2",
                           "--requests", "20", "--export-requests", "2", "--import-hands",
                           "20", "--batch", "10", "--workers", "1", "--json", str(out)])  # fmt: skip
    assert [p.name for p in phases] == ["stats", "304", "page", "export", "import"]
    for p in phases:
        assert p.requests >= 1 and p.errors == 0, p
        assert 0 < p.p50_ms <= p.p99_ms, p
        assert (p.bytes == 0) == (p.name == "304"), p  # a 304 has no body
    by = {p.name: p for p in phases}
    assert by["page"].requests <= 20 and by["export"].requests <= 2
    assert by["export"].units == 200 * by["export"].requests  # every hand of the run, a line each
    assert by["import"].units == 10 * by["import"].requests  # each batch accepted whole
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert [p["name"] for p in doc["phases"]] == list(by) and doc["hands"] == 200
    assert service.table(phases).splitlines()[0].split()[:3] == ["phase", "clients", "requests"]
