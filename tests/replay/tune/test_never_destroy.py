"""``paohuzi tune`` never destroys (issue 40): it writes only into a new folder, an empty one
or one it made (its marker); ``--start`` takes what its help says; the validation verdict
needs enough deals; the checkpoint is JSON, never a pickle, and a forged or tampered one is
one line that runs nothing."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from weights_helpers import ODD_HEURISTIC, write_weights

from engine.policies import weights as W
from paohuzi.cli.main import main

#: The marker of a folder tune made (replay.tune.folder.MARKER; spelled out here so that the
#: tests of the bugs also run against the tune from before it).
MARKER = "paohuzi-tuning.json"
#: How the pickled checkpoint of the tune before it is refused.
OLD = "the checkpoint of an older paohuzi tune, a pickle, which is never read"

QUICK = ["-g", "2", "--deals", "8", "--popsize", "3", "--validation-deals", "200", "--seed", "5",
         "--params", "danger_w,hx", "-q", "-w", "1"]  # fmt: skip


def tune(out: Path, *args: str) -> object:
    return CliRunner().invoke(main, ["tune", str(out), *QUICK, *args])


def _error(r: object) -> str:
    assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
    lines = r.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in r.output  # type: ignore[attr-defined]
    return lines[0]


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (what must not change)."""
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(folder.rglob("*"))
    }


def _report(out: Path) -> dict:
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    for g in doc["generations"]:
        g.pop("seconds")
    doc["validation"].pop("seconds")
    doc.pop("command")
    return doc


@pytest.fixture(scope="module")
def done(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("never") / "done"
    r = tune(out)
    assert r.exit_code == 0, r.output
    return out


# ------------------------------------------------------------------ 1. only its own folder


@pytest.mark.parametrize(
    "contents",
    [
        {"report.md": "my notes\n", "weights.json": '{"mine": true}\n'},  # the myproj
        {"passwd": "root:x:0:0\n", "ssl/openssl.cnf": "[req]\n", ".hidden": ""},  # /etc-like
        {".git/HEAD": "ref: refs/heads/main\n"},
    ],
)
def test_tune_into_a_folder_not_its_own_bug(tmp_path: Path, contents: dict[str, str]) -> None:
    # `tune myproj` replaced report.md and weights.json and wrote .lock, state.pkl, … there
    out = tmp_path / "myproj"
    for name, text in contents.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    before = _files(out)
    line = _error(tune(out))
    assert f"{out}: a folder that paohuzi tune did not make (no {MARKER} in it)" in line
    assert _files(out) == before  # nothing written, not even .lock


def test_new_and_empty_folders_get_the_marker(tmp_path: Path) -> None:
    from replay.tune import folder

    assert folder.MARKER == MARKER
    new = tmp_path / "a" / "b" / "new"
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (new, empty):
        r = tune(out)
        assert r.exit_code == 0, r.output
        marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
        assert marker == {"format": "paohuzi-tuning", "version": 1}
    assert _report(new) == _report(empty)


def test_its_own_folder_is_taken_again(done: Path, tmp_path: Path) -> None:
    out = tmp_path / "again"
    shutil.copytree(done, out)
    (out / "notes.txt").write_text("the user's, beside tune's files\n")
    r = tune(out)  # done: validates nothing again
    assert r.exit_code == 0, r.output
    assert (out / "notes.txt").read_text() == "the user's, beside tune's files\n"
    assert _report(out) == _report(done)


@pytest.mark.parametrize(
    "marker, message",
    [
        ("not json", "not a paohuzi tuning marker"),
        ('{"format": "something-else", "version": 1}', "not a paohuzi tuning marker"),
        ('{"format": "paohuzi-tuning", "version": 9}', "another version of paohuzi tune"),
    ],
)
def test_bad_marker(tmp_path: Path, marker: str, message: str) -> None:
    out = tmp_path / "m"
    out.mkdir()
    (out / MARKER).write_text(marker)
    (out / "report.md").write_text("mine\n")
    before = _files(out)
    assert message in _error(tune(out))
    assert _files(out) == before


def test_marker_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text('{"format": "paohuzi-tuning", "version": 1}')
    out = tmp_path / "m"
    out.mkdir()
    (out / MARKER).symlink_to(real)
    assert "symbolic link" in _error(tune(out))
    assert sorted(os.listdir(out)) == [MARKER]


def test_out_is_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert "is a symlink" in _error(tune(tmp_path / "link"))
    assert os.listdir(tmp_path / "real") == []


def test_an_older_tuning_folder_is_refused(tmp_path: Path) -> None:
    """A folder of the tune before the marker (its pickled state.pkl beside its outputs): refused
    by name, pointing at its weights, and left as it was."""
    out = tmp_path / "old"
    out.mkdir()
    for name in ("state.pkl", "weights.json", "report.json", "report.md", "fitness.svg", ".lock"):
        (out / name).write_bytes(b"old\n")
    before = _files(out)
    line = _error(tune(out))
    assert f"state.pkl: {OLD}" in line
    assert f"--start {out / 'weights.json'}" in line
    assert _files(out) == before


# ------------------------------------------------------------------ 2. --start WEIGHTS


@pytest.mark.parametrize("start", ["w.json", "./w.json", "default", "tuned-hunan", "TUNED-HUNAN"])
def test_start_weights_file_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start: str
) -> None:
    # --start w.json / --start default: "policy 'w.json': only greedy and heuristic take weights"
    monkeypatch.chdir(tmp_path)
    write_weights(tmp_path / "w.json", "heuristic", ODD_HEURISTIC)
    expected = (
        W.read_weights(tmp_path / "w.json", "heuristic")
        if "json" in start
        else W.load_spec(f"heuristic@{start}")
    )
    r = tune(Path("o"), "-g", "1", "--start", start)
    assert r.exit_code == 0, r.output
    assert _report(tmp_path / "o")["settings"]["start"] == expected.as_dict()


def test_start_as_a_greedy_file(tmp_path: Path) -> None:
    f = write_weights(tmp_path / "g.json", "greedy", W.DEFAULT_GREEDY.as_dict())
    r = tune(tmp_path / "o", "-g", "1", "--policy", "greedy", "--params", "hx", "--start", str(f))
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize(
    "start, message",
    [
        ("nope", "--start 'nope': neither a weights file (a path with '/' or ending in .json)"
                 " nor a shipped heuristic set (default, tuned-hunan"),
        ("a b", "--start 'a b': neither a weights file"),
        ("random@x", "--start 'random@x': neither a weights file"),
        ("missing.json", "weights file 'missing.json': cannot read it"),
        ("greedy@default", "--start greedy@default: a greedy table, not heuristic's"),
    ],
)  # fmt: skip
def test_bad_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert message in _error(tune(Path("o"), "--start", start))
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------ 3. enough validation deals


@pytest.mark.parametrize("n", ["1", "2", "199"])
def test_too_few_validation_deals_bug(tmp_path: Path, n: str) -> None:
    # --validation-deals 2 put a normal interval on two deals and said "worse" (one: NaN)
    line = _error(tune(tmp_path / "o", "--validation-deals", n))
    assert line == (
        f"Error: --validation-deals {n}: 200 … 10,000,000 (on fewer than 200 deals the 95 %"
        " interval of the verdict is not to be trusted)"
    )
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------ 4. the checkpoint


class _Touch:
    """A pickle that creates ``path`` when it is loaded."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple:
        return (open, (str(self.path), "w"))


def _forged_state_pkl(path: Path, sentinel: Path) -> None:
    """A state.pkl as the pickling tune wrote it (its header, a correct SHA-256), whose
    payload runs code when unpickled."""
    payload = pickle.dumps(_Touch(sentinel), protocol=4)
    digest = hashlib.sha256(payload).hexdigest().encode()
    path.write_bytes(b"paohuzi-tune-state 1\n" + digest + b"\n" + payload)


@pytest.mark.parametrize("marked", [True, False])
def test_forged_pickle_checkpoint_bug(tmp_path: Path, marked: bool) -> None:
    # a forged state.pkl ran its code (here: created a file) before it was refused
    out = tmp_path / "forged"
    out.mkdir()
    if marked:
        (out / MARKER).write_text('{"format": "paohuzi-tuning", "version": 1}\n')
    else:  # an older tuning folder
        (out / "weights.json").write_text("{}\n")
    sentinel = tmp_path / "pwned"
    _forged_state_pkl(out / "state.pkl", sentinel)
    line = _error(tune(out))
    assert not sentinel.exists()
    assert f"state.pkl: {OLD}" in line
    assert not (out / "checkpoint.json").exists() and not (out / "report.json").exists()


def test_a_pickle_in_the_checkpoints_place_runs_nothing(done: Path, tmp_path: Path) -> None:
    out = tmp_path / "pk"
    shutil.copytree(done, out)
    sentinel = tmp_path / "pwned"
    (out / "checkpoint.json").write_bytes(pickle.dumps(_Touch(sentinel), protocol=4))
    assert "checkpoint.json: not a tuning checkpoint (not JSON" in _error(tune(out))
    assert not sentinel.exists()


def test_the_checkpoint_is_json(done: Path) -> None:
    doc = json.loads((done / "checkpoint.json").read_text(encoding="utf-8"))
    assert doc["format"] == "paohuzi-tune-checkpoint" and doc["version"] == 2
    assert len(doc["generations"]) == 2 and doc["validation"]["deals"] == 200
    assert not (done / "state.pkl").exists()


def _rewrite(path: Path, change: object, fix_digest: bool) -> None:
    from replay.tune.optimizer import _digest

    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)  # type: ignore[operator]
    if fix_digest:
        doc["sha256"] = _digest(
            {k: v for k, v in doc.items() if k not in ("format", "version", "sha256")}
        )
    path.write_text(json.dumps(doc))


def _fitness(doc: dict) -> None:
    doc["generations"][1]["fitness"][0] += 0.25  # the same ranking: the optimizer reads no more


def _ranking(doc: dict) -> None:
    g = doc["generations"][0]
    g["fitness"].reverse()  # another candidate best: another step
    g["best"] = len(g["fitness"]) - 1 - g["best"]


def _best(doc: dict) -> None:
    g = doc["generations"][0]
    g["best"] = (g["best"] + 1) % len(g["fitness"])


def _sigma(doc: dict) -> None:
    doc["generations"][0]["sigma"] *= 1.5


def _type(doc: dict) -> None:
    doc["generations"][1]["fitness"][2] = "0.5"


def _extra(doc: dict) -> None:
    doc["generations"][0]["note"] = 1


def _settings(doc: dict) -> None:
    del doc["settings"]["seed"]


def _validation(doc: dict) -> None:
    doc["validation"]["deals"] = 10_000


@pytest.mark.parametrize(
    "change, fix_digest, message",
    [
        (_fitness, False, "checkpoint.json: damaged (its checksum differs; remove it to start"
                          " again)"),
        (_ranking, True, "generation 0 does not replay to its recorded σ"),
        (_best, True, "generation 0 has another population or best"),
        (_sigma, True, "generation 0 does not replay to its recorded σ"),
        (_type, True, "field generations[1].fitness[2]: expected a number, got '0.5'"),
        (_extra, True, "field generations[0].note is unknown"),
        (_settings, True, "holds a tuning run with another --seed (null, not 5)"),
        (_validation, True, "its validation is not of this run"),
    ],
)  # fmt: skip
def test_tampered_checkpoint(
    done: Path, tmp_path: Path, change: object, fix_digest: bool, message: str
) -> None:
    out = tmp_path / "t"
    shutil.copytree(done, out)
    _rewrite(out / "checkpoint.json", change, fix_digest)
    before = _files(out)
    assert message in _error(tune(out))
    assert _files(out) == before


def test_truncated_checkpoint(done: Path, tmp_path: Path) -> None:
    out = tmp_path / "cut"
    shutil.copytree(done, out)
    data = (out / "checkpoint.json").read_bytes()
    (out / "checkpoint.json").write_bytes(data[: len(data) // 2])
    assert "checkpoint.json: not a tuning checkpoint (not JSON" in _error(tune(out))
    (out / "checkpoint.json").write_text('{"format": "paohuzi-tune-checkpoint", "version": 1}')
    assert "a checkpoint of another version of paohuzi tune" in _error(tune(out))
