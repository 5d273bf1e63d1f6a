"""The decision review on the dashboard (issue 23): the Replay page's graph, option bars and
costliest decisions, from a stored review or computed on request within the page's budget;
the Review page's rates and its links into the replay. Through AppTest, on a copy of the
fixture store holding a stored review of run ``base`` hand 7."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from dash_helpers import run_page

from dashboard.services import review as rv
from paohuzi.cli.main import main
from replay.store.reviews import Key

ROLLOUTS = "12"


@pytest.fixture(scope="module")
def reviewed(store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture store with hands 5–8 of run base reviewed (every seat, 12 rollouts)."""
    d = tmp_path_factory.mktemp("reviewed") / "data"
    shutil.copytree(store_dir, d)
    r = CliRunner().invoke(main, ["review", "base", "--hands", "5-8", "-N", ROLLOUTS, "-q",
                                  "--data", str(d), "-w", "1"])  # fmt: skip
    assert r.exit_code == 0, r.output
    return d


def texts(at) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(
        str(x.value) for kind in ("markdown", "caption", "subheader") for x in at.get(kind)
    )


def charts(at) -> int:  # type: ignore[no-untyped-def]
    return len(at.get("vega_lite_chart"))


def _replay(at_step: int | None = None):  # type: ignore[no-untyped-def]
    q = {"run": "base", "hand": "7", "seat": "all"}
    if at_step is not None:
        q["step"] = str(at_step)
    at = run_page("replay", q)
    at.number_input(key="rv_rollouts").set_value(int(ROLLOUTS)).run()
    return at


def test_replay_page_draws_the_stored_review(reviewed: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    use_store(reviewed)
    from replay.replayer.hand import load_hand
    from replay.store import open_store

    r = open_store(reviewed).run("base")
    log = load_hand(reviewed, "base", 7)
    review = rv.stored_review(r.path, r.manifest, log, (0, 1, 2), Key(12, "heuristic", 0))
    assert review is not None and review.decisions
    first = review.decisions[0].step
    at = _replay(first)
    assert not at.exception and not at.error
    text = texts(at)
    assert "stored review" in text and f"Options at step {first}" in text
    assert charts(at) == 3  # the graph and the two option bars
    costly = [b for b in at.button if str(b.key).startswith("rv_costly_")]
    assert costly == [] or costly[0].label.startswith("step ")
    if costly:
        target = int(str(costly[0].key).removeprefix("rv_costly_"))
        costly[0].click().run()
        assert at.slider(key="rp_step").value == target


def test_replay_page_reviews_on_request(store_dir: Path, use_store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = tmp_path / "data"
    shutil.copytree(store_dir, d)
    use_store(d)
    at = run_page("replay", {"run": "base", "hand": "3", "seat": "0"})
    at.number_input(key="rv_rollouts").set_value(4).run()
    assert "No stored review of seat 0" in texts(at)
    at.button(key="rv_go").click().run()
    assert not at.exception and not at.error
    assert "computed now (not stored" in texts(at)
    assert charts(at) >= 1
    assert not (d / "runs" / "run=base" / "reviews").exists()  # the dashboard writes nothing


def test_replay_page_refuses_a_budget_above_its_limit(store_dir: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    use_store(store_dir)
    at = run_page("replay", {"run": "base", "hand": "3"})
    at.number_input(key="rv_rollouts").set_value(rv.MAX_PAGE_ROLLOUTS + 1).run()
    assert any(f"above the page's limit of {rv.MAX_PAGE_ROLLOUTS}" in e.value for e in at.error)


def test_review_page_shows_rates_and_links(reviewed: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    use_store(reviewed)
    at = run_page("review")
    assert not at.exception and not at.error
    text = texts(at)
    assert "run base" in text and "4 hands" in text and "12 rollouts" in text
    table = at.table[0].value
    assert {"policy", "kind", "blunders", "score loss"} <= set(table.columns)
    assert "greedy" in set(table["policy"])
    links = [p for p in at.get("page_link") if "replay" in p.proto.page]
    assert links and all(p.proto.label.startswith("hand ") for p in links)
    assert "step=" in links[0].proto.query_string  # opens the replay at the step


def test_review_page_without_reviews(store_dir: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    use_store(store_dir)
    at = run_page("review")
    assert not at.exception
    assert any("No stored review" in i.value for i in at.info)
