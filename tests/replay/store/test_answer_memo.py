"""The answer memo (replay.store.answer_memo) behind ``paohuzi stats``: an answer is given
again only for the same generation of the store, the same code and the same arguments —
never past a damaged file, an edited review, a resumed run or an edit of the code — and it
is the same bytes, warnings included, as the computation's."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from edit_helpers import edit_in_place

from paohuzi.cli.main import main
from replay.store import answer_memo
from replay.store.layout import ANSWERS_DIR_NAME, run_dir


def _simulate(data: Path, run: str, seed: int, hands: int = 60) -> None:
    r = CliRunner().invoke(main, ["simulate", "--data", str(data), "--run", run, "-n", str(hands),
                                  "--seed", str(seed), "-w", "1", "-q", "--shard-hands", "20"])  # fmt: skip
    assert r.exit_code == 0, r.output


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("answers") / "data"
    _simulate(d, "a", 1)
    _simulate(d, "b", 2)
    return d


@pytest.fixture
def data(pristine: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(pristine, tmp_path / "data", symlinks=True))


def stats(data: Path, *args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["stats", "--data", str(data), *args])
    return r.exit_code, r.stdout, r.stderr


def computed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the computations of the figures from now on."""
    import replay.analysis.stats as figures

    calls: list[int] = []
    real = figures.run_stats

    def counting(*a: object, **k: object) -> object:
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(figures, "run_stats", counting)
    return calls


def kept(data: Path) -> list[str]:
    folder = data / ANSWERS_DIR_NAME
    return sorted(os.listdir(folder)) if folder.is_dir() else []


@pytest.mark.parametrize("args", [("--json",), (), ("a", "--json")])
def test_an_answer_is_given_again_the_same(
    data: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    calls = computed(monkeypatch)
    first = stats(data, *args)
    second = stats(data, *args)
    assert first[0] == 0 and second == first
    assert len(calls) == 1 and len(kept(data)) == 1
    # Another format, another selection: another answer.
    assert stats(data, "b", "--json")[0] == 0 and len(calls) == 2 and len(kept(data)) == 2


def test_never_past_a_file_edited_in_place(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert stats(data, "--json")[0] == 0
    calls = computed(monkeypatch)
    edit_in_place(run_dir(data, "a") / "hands" / "part-00001.parquet", 0xFF)
    code, _, err = stats(data, "a", "--json")
    assert code == 2 and "run a is damaged" in err and "part-00001.parquet" in err
    code, out, err = stats(data, "--json")
    assert code == 0 and "Warning: run a is damaged and left out" in err
    assert [r["run"] for r in json.loads(out)["runs"]] == ["b"]
    assert len(calls) == 2  # the refusal, then the figures of the new generation
    # ... and that answer, its warning with it, is given again as it was (not the note on
    # the catalog rebuilt for the new generation: it is not rebuilt again).
    again = stats(data, "--json")
    assert again[:2] == (code, out) and len(calls) == 2
    assert _warnings(again[2]) == _warnings(err) != []


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("Warning:")]


def test_a_run_added_or_removed_is_another_generation(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert [r["run"] for r in json.loads(stats(data, "--json")[1])["runs"]] == ["a", "b"]
    calls = computed(monkeypatch)
    _simulate(data, "c", 3)
    assert [r["run"] for r in json.loads(stats(data, "--json")[1])["runs"]] == ["a", "b", "c"]
    r = CliRunner().invoke(main, ["rm", "b", "--data", str(data), "-y"])
    assert r.exit_code == 0, r.output
    assert [r["run"] for r in json.loads(stats(data, "--json")[1])["runs"]] == ["a", "c"]
    assert len(calls) == 2


def test_an_edit_of_the_code_is_another_key(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.store.runs import open_store

    state = open_store(data).scan(manifests=False)
    key = answer_memo.answer_key(state, "stats", ["json", [], True])
    assert key == answer_memo.answer_key(state, "stats", ["json", [], True])
    monkeypatch.setattr(answer_memo, "_CODE_KEY", ["another version of the code"])
    assert answer_memo.answer_key(state, "stats", ["json", [], True]) != key


def test_a_stored_review_is_part_of_the_key(data: Path) -> None:
    from replay.store.runs import open_store

    r = CliRunner().invoke(main, ["review", "a", "--data", str(data), "--sample", "2",
                                  "--rollouts", "8", "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    state = open_store(data).scan(manifests=False)
    key = answer_memo.answer_key(state, "stats", ["json", [], True])
    (review,) = (run_dir(data, "a") / "reviews").iterdir()
    edit_in_place(review, 0xFF)
    state = open_store(data).scan(manifests=False)
    assert answer_memo.answer_key(state, "stats", ["json", [], True]) != key


def test_a_malformed_or_foreign_answer_is_no_answer(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, expected, _ = stats(data, "--json")
    (name,) = kept(data)
    path = data / ANSWERS_DIR_NAME / name
    doc = json.loads(path.read_text())
    calls = computed(monkeypatch)
    for bad in (
        b"not json",
        json.dumps({**doc, "key": "0" * 64}).encode(),  # kept under another key
        json.dumps({**doc, "format": "paohuzi-answer-0"}).encode(),
        json.dumps({**doc, "warnings": "one"}).encode(),
    ):
        path.write_bytes(bad)
        assert stats(data, "--json")[1] == expected
    assert len(calls) == 4


def test_a_read_only_store_keeps_no_answer(data: Path) -> None:
    os.chmod(data, 0o555)
    try:
        assert stats(data, "--json")[0] == 0
        assert kept(data) == []
    finally:
        os.chmod(data, 0o755)


def test_at_most_answers_kept(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answer_memo, "ANSWERS_KEPT", 2)
    assert stats(data, "a", "--json")[0] == 0
    dead = data / ANSWERS_DIR_NAME / f".{'0' * 64}.json.tmp-999999999"  # a write cut short
    dead.write_text("{")
    for args in (("b",), ("a", "b"), ("b", "a")):
        assert stats(data, *args, "--json")[0] == 0
    assert len(kept(data)) == 2 and not dead.exists()
