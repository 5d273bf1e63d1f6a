"""One label for a run's policies (issue 60): ``paohuzi runs`` labelled every run of imported
hands (the hands of ``paohuzi play`` among them) ``import``, where ``paohuzi stats`` named the
policies its hands were played by; both now name them by
:func:`replay.store.params.policies_label`, and so does the service's ``/runs``."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.store import manage, open_store


def _ok(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, res.output
    return str(res.stdout)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run ``s`` simulated by heuristic, random, random; run ``imp``: 6 of its hands
    imported, two of them naming no policy (their seats play "import"); run ``one``: a hand
    naming none."""
    from replay.replayer import replay_file

    d = tmp_path_factory.mktemp("labels") / "data"
    _ok("simulate", "--data", str(d), "--run", "s", "-n", "8", "--seed", "7", "-w", "1", "-q",
        "-p", "heuristic,random,random")  # fmt: skip
    lines = []
    for hand in range(6):
        doc = json.loads(replay_file.export_hand(d, "s", hand, "json")[0])
        if hand >= 4:
            doc["policies"] = None
        lines.append(json.dumps(doc, ensure_ascii=False))
    batch = d.parent / "hands.jsonl"
    batch.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _ok("import", "--jsonl", str(batch), "--data", str(d), "--run", "imp")
    one = d.parent / "one.jsonl"
    one.write_text(lines[-1] + "\n", encoding="utf-8")
    _ok("import", "--jsonl", str(one), "--data", str(d), "--run", "one", "--allow-duplicate")
    return d


def _stats_label(data: Path, run: str) -> str:
    head = _ok("stats", run, "--data", str(data)).splitlines()[0]
    return head.split(" · policies ", 1)[1].split(" · ", 1)[0]


def test_runs_and_stats_name_the_same_policies(data: Path) -> None:
    listed = {
        r["run"]: r["policies"] for r in json.loads(_ok("runs", "--data", str(data), "--json"))
    }
    assert listed == {
        "s": "heuristic,random,random",
        "imp": "heuristic,import,random",  # was "import"
        "one": "import",
    }
    for run, label in listed.items():
        assert _stats_label(data, run) == label, run
    text = _ok("runs", "--data", str(data))
    assert "heuristic,import,random" in text


def test_past_the_kept_classes_the_hands_are_read(data: Path) -> None:
    run = open_store(data).run("imp")
    m = json.loads(json.dumps(run.manifest))
    m["params"]["seat_policies"] = m["params"]["seat_policies"][:1]
    m["params"]["seat_policies_overflow"] = True
    fake = SimpleNamespace(manifest=m, path=run.path, name="imp")
    assert manage.run_policies_label(fake) == "heuristic,import,random"
