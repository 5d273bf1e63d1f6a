"""The Reference page through AppTest on the fixture store, with reference files written by the
report's writer (reference_helpers): the selection of one preset beside its published
figures, each with the difference and whether it differs; a selection of several rule sets,
of a preset with overrides, of a preset the file lacks; a missing and a damaged file — each a
message, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from dash_helpers import run_page
from reference_helpers import figures, write_reference
from streamlit.testing.v1 import AppTest

from replay.analysis.figures.results import Rate
from replay.reference.published import REFERENCE_ENV


def texts(at: AppTest) -> str:
    parts = [e.value for e in at.markdown] + [e.value for e in at.caption]
    parts += [str(e.value) for e in at.info] + [str(e.value) for e in at.warning]
    parts += [str(e.value) for e in at.error]
    return "\n".join(str(p) for p in parts)


@pytest.fixture()
def store(store_dir: Path, use_store) -> Path:  # type: ignore[no-untyped-def]
    use_store(store_dir)
    return store_dir


def use_reference(monkeypatch: pytest.MonkeyPatch, path: Path) -> Path:
    monkeypatch.setenv(REFERENCE_ENV, str(path))
    return path


def _no_hands(*_: object) -> None:
    raise AssertionError("the Reference page read the hands of runs its summaries hold")


def test_one_preset_beside_its_reference(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a 荒庄 rate no greedy table comes near: that row must differ
    got = {"hunan": figures(hands=5000, huangzhuang=Rate.of(4500, 5000)),
           "luzhou": figures(hands=800)}  # fmt: skip
    use_reference(monkeypatch, write_reference(tmp_path / "reference.json", got))
    at = run_page("reference", {"runs": "*"})
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    # the whole store: several rule sets, each named with its runs, each a button to it
    (warning,) = [str(w.value) for w in at.warning]
    assert "The selection mixes rule sets:" in warning
    assert "hunan (base, dup, mixed)" in warning and "hunan-4p (four)" in warning
    assert not at.table
    picks = {b.label: b for b in at.button if str(b.key).startswith("ref_pick_")}
    assert set(picks) == {"hunan (base, dup, mixed)", "hunan-4p (four)",
                          "hunan min_huxi=10 (min10)"}  # fmt: skip
    picks["hunan (base, dup, mixed)"].click().run()
    assert not at.exception and not at.error and not at.warning
    assert at.session_state["f_runs"] == ["base", "dup", "mixed"]
    assert at.query_params["runs"] == ["base", "dup", "mixed"]
    assert len(at.table[0].value) == 8
    # runs played here without --duplicate: the figures come from the summaries, not the hands
    from replay.analysis.figures import effects

    hands_read = effects.run_moments
    monkeypatch.setattr(effects, "run_moments", _no_hands)
    at.session_state["f_runs"] = ["base", "mixed"]
    at.run()
    assert not at.exception and not at.error and not at.warning
    monkeypatch.setattr(effects, "run_moments", hands_read)
    t = at.table[0].value
    assert list(t.columns) == [
        "figure", "selection", "reference", "selection − reference", "differs", "selection n",
        "reference n",
    ]  # fmt: skip
    assert len(t) == 8
    rows = t.set_index("figure")
    assert rows.loc["荒庄", "reference"] == "90.0 % [89.1 – 90.8 %]"
    assert rows.loc["荒庄", "differs"] == "yes"
    assert rows.loc["win (hand ends in a 胡)", "selection n"] == f"{240 + 90:,} hands"
    assert rows.loc["mean winning 胡息", "reference"] == "20.50 [20.20 – 20.80]"
    assert rows.loc["dealer advantage", "reference"] == "+2.0 pp [+0.0 – +4.0 pp]"
    assert set(t["differs"]) <= {"yes", "no"}
    assert all(" pp [" in x for x in t["selection − reference"].iloc[:5])
    text = texts(at)
    assert "`learned@hunan` in every seat, 5,000 hands" in text
    assert "policies `greedy`, `random`" in text
    assert "a difference can come from the selection's other policies" in text
    # with a --duplicate run the figures come from the hands (a deal spans its rotations)
    at.session_state["f_runs"] = ["base", "dup"]
    at.run()
    assert not at.exception and not at.error and not at.warning
    assert len(at.table[0].value) == 8


def test_the_selections_it_cannot_compare(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_reference(monkeypatch, write_reference(tmp_path / "r.json", {"luzhou": figures()}))
    at = run_page("reference")
    at.session_state["f_runs"] = ["min10"]
    at.run()
    assert not at.exception and not at.error
    assert "play hunan min_huxi=10, not a preset as it is" in texts(at)
    at.session_state["f_runs"] = ["base"]
    at.run()
    assert not at.exception and not at.error
    assert "has no figures of hunan: it has luzhou" in texts(at)
    assert not at.table


def test_a_missing_or_damaged_file_is_a_message(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_reference(monkeypatch, tmp_path / "nowhere" / "reference.json")
    at = run_page("reference")
    assert not at.exception and not at.error
    (info,) = [str(i.value) for i in at.info]
    assert "No published reference figures at `…/reference.json` yet" in info
    assert "make reference" in info and str(tmp_path) not in info
    bad = tmp_path / "reference.json"
    bad.write_text("{")
    use_reference(monkeypatch, bad)
    at = run_page("reference")
    assert not at.exception
    (error,) = [str(e.value) for e in at.error]
    assert error.startswith("`…/reference.json`: not JSON") and "make reference" in error
    assert str(tmp_path) not in error


def test_the_overview_links_to_it(store: Path) -> None:
    at = run_page("overview")
    links = {p.proto.label: p.proto.query_string for p in at.get("page_link")}
    label = "The selection beside the published reference figures of its preset"
    assert links[label] == "runs=base"  # the selection goes with it


def test_the_first_view_is_one_preset_beside_its_reference(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No selection asked for: the store's main run, whose preset the page shows at once
    (not a warning asking for one)."""
    use_reference(monkeypatch, write_reference(tmp_path / "r.json", {"hunan": figures()}))
    at = run_page("reference")
    assert not at.exception and not at.error and not at.warning
    assert len(at.table[0].value) == 8
    assert "**Selection**: hunan, 1 run (base), 240 hands" in texts(at)
