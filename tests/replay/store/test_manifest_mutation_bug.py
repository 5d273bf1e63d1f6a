"""Any damage to one run's manifest or to the checksum cache (issue 20): hypothesis mutates a
valid manifest and ``.checksums.json`` — values replaced by other types, keys deleted, lists
emptied or lengthened, values nested deep or made large — and runs ``runs``, ``stats``,
``hands``, ``replay``, ``export``, ``verify`` and ``index``: never a traceback, never a changed
figure or hand of the other run."""

from __future__ import annotations

import json
import shutil
import tempfile
import traceback
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sizes import size

from paohuzi.cli.main import main
from replay.store.layout import run_dir

GOOD, BAD = "good", "other"

#: What a mutated value becomes: other JSON types, edge numbers, long and nested values.
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([-1, 0, 1, 2**63, 2**64, 10**40]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["false", "200", "../../etc/passwd", "/dev/zero", "x" * 5000]),
    st.lists(st.integers(0, 5), max_size=3),
    st.dictionaries(st.sampled_from(["path", "rows", "bytes", "sha256"]), st.integers(0, 9)),
    st.integers(1, 400).map(lambda n: json.loads("[" * n + "]" * n)),
)


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        where = "".join(traceback.format_exception(*r.exc_info)[-4:])
        raise AssertionError(f"{args}: {type(r.exception).__name__}: {r.exception}\n{where}")
    assert "Traceback" not in r.stdout + r.stderr, (args, r.stderr)
    return r.exit_code, r.stdout, r.stderr


def good_view(data: Path) -> dict[str, Any]:
    """What the commands say of the good run."""
    d = str(data)
    code, stats, err = invoke("stats", "--data", d, "--json", GOOD)
    assert code == 0, err
    code, hands, err = invoke("hands", "--data", d, "--json", GOOD)
    assert code == 0, err
    code, replay, err = invoke("replay", "--data", d, GOOD, "3", "--step", "5")
    assert code == 0, err
    code, export, err = invoke("export", "--data", d, GOOD, "3")
    assert code == 0, err
    code, verify, err = invoke("verify", "--data", d, "-w", "1", "-q", "--json", GOOD)
    assert code == 0, err
    verdict = json.loads(verify)
    return {
        "stats": json.loads(stats),
        "hands": json.loads(hands),
        "replay": replay,
        "export": export,
        "verify": (verdict["hands"], verdict["bad_hands"]),
    }


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    data = tmp_path_factory.mktemp("mutate")
    for run, seed in ((GOOD, 5), (BAD, 6)):
        code, _, err = invoke("simulate", "--data", str(data), "--run", run, "--hands", "30",
                              "--seed", str(seed), "--shard-hands", "15", "-w", "1", "-q")  # fmt: skip
        assert code == 0, err
    code, _, err = invoke("index", "--data", str(data), "-w", "1", "-q")
    assert code == 0, err
    assert (data / ".checksums.json").is_file()
    return data, good_view(data)


def mutate(data: st.DataObject, doc: Any, depth: int = 0) -> Any:
    """``doc`` with one value somewhere in it replaced, deleted or reshaped."""
    if isinstance(doc, dict) and doc and depth < 6 and data.draw(st.booleans(), "descend"):
        key = data.draw(st.sampled_from(sorted(doc)), "key")
        if data.draw(st.integers(0, 4), "delete?") == 0:
            return {k: v for k, v in doc.items() if k != key}
        return {**doc, key: mutate(data, doc[key], depth + 1)}
    if isinstance(doc, list) and doc and depth < 6 and data.draw(st.booleans(), "descend"):
        i = data.draw(st.integers(0, len(doc) - 1), "index")
        how = data.draw(st.sampled_from(["edit", "drop", "double", "empty"]), "list op")
        if how == "drop":
            return doc[:i] + doc[i + 1 :]
        if how == "double":
            return doc + doc[i : i + 1]
        if how == "empty":
            return []
        return doc[:i] + [mutate(data, doc[i], depth + 1)] + doc[i + 1 :]
    return data.draw(VALUES, "value")


@settings(
    max_examples=size(6, 12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_mutated_manifest_and_cache_never_break_the_other_run_bug(
    pristine: tuple[Path, dict[str, Any]], data: st.DataObject
) -> None:
    source, expected = pristine
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "data"
        shutil.copytree(source, store)
        mpath = run_dir(store, BAD) / "manifest.json"
        cpath = store / ".checksums.json"
        for path in data.draw(st.sampled_from([[mpath], [cpath], [mpath, cpath]]), "files"):
            doc = json.loads(path.read_text())
            for _ in range(data.draw(st.integers(1, 3), "mutations")):
                doc = mutate(data, doc)
            path.write_text(json.dumps(doc))
        d = str(store)
        code, out, _ = invoke("runs", "--data", d, "--json")
        assert code == 0 and {r["run"] for r in json.loads(out)} == {GOOD, BAD}
        code, out, err = invoke("stats", "--data", d, "--json")
        assert code == 0, err
        got = {r["run"]: r for r in json.loads(out)["runs"]}
        assert got[GOOD] == expected["stats"]["runs"][0]
        for args in (
            ["hands", BAD],
            ["replay", BAD, "1"],
            ["export", BAD, "1"],
            ["verify", "-w", "1", "-q", BAD],
            ["stats", BAD],
        ):
            code, _, err = invoke(args[0], "--data", d, *args[1:])
            assert code in (0, 1, 2), (args, err)
            assert len(err.strip().splitlines()) <= 2, (args, err)
        code, _, err = invoke("index", "--data", d, "-w", "1", "-q")
        assert code in (0, 2), err
        assert good_view(store) == expected
