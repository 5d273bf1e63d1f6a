"""The published reference figures (replay.reference.published): what the writer writes the
reader reads back equal; a file that is not what the writer writes is one line naming the
file and its first fault."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from reference_helpers import SMALL, figures, write_reference

from replay.analysis.figures.results import Mean, Rate
from replay.reference.published import (
    FIGURES,
    MAX_BYTES,
    PUBLISHED_FORMAT,
    REFERENCE_ENV,
    MissingReference,
    UnreadableReference,
    default_path,
    location,
    read_published,
)


def test_what_the_writer_writes_reads_back_equal(tmp_path: Path) -> None:
    hunan = figures(hands=3000, run="preset.hunan-aaaa")
    luzhou = figures(hands=500, run="preset.luzhou-bbbb", huxi=Mean.none(9), score=Mean.none(9))
    path = write_reference(tmp_path / "reference.json", {"hunan": hunan, "luzhou": luzhou})
    pub = read_published(path)
    assert pub.scale == SMALL.name
    assert set(pub.presets) == {"hunan", "luzhou"}
    p = pub.presets["hunan"]
    assert (p.policy, p.run, p.hands) == ("learned@hunan", "preset.hunan-aaaa", 3000)
    assert list(p.figures) == list(FIGURES)
    dw = hunan.means["dealer_win"]
    want = {
        "win": hunan.stats.outcomes["win"],
        "huangzhuang": hunan.stats.outcomes["huangzhuang"],
        "dealer_win": Rate.of(round(dw.mean * dw.n), dw.n),
        "dealer_adv": hunan.means["dealer_adv"],
        "zimo": hunan.stats.zimo,
        "huxi": hunan.means["huxi"],
        "score": hunan.means["score"],
        "decisions_per_hand": hunan.events.decisions_per_hand,
    }
    assert list(p.figures) == list(want)
    for name, got in p.figures.items():  # the file keeps 12 significant digits
        w = want[name]
        assert type(got) is type(w) and got.n == w.n, name
        for field in ("k", "p", "mean", "lo", "hi"):
            if hasattr(w, field):
                assert getattr(got, field) == pytest.approx(getattr(w, field), rel=1e-11), name
    # a figure without a value is null in the file (JSON has no NaN), None when read
    q = pub.presets["luzhou"].figures
    assert q["huxi"] is None and q["score"] is None and isinstance(q["win"], Rate)


def test_where_the_dashboard_looks() -> None:
    assert default_path().parts[-3:] == ("docs", "reference", "reference.json")
    assert (default_path().parents[2] / "replay" / "reference" / "published.py").is_file()
    assert location({}) == default_path()
    assert location({REFERENCE_ENV: "/x/ref.json"}) == Path("/x/ref.json")


def _doc(tmp_path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(write_reference(tmp_path / "w.json").read_text())
    return doc


def _refused(path: Path) -> str:
    with pytest.raises(UnreadableReference) as e:
        read_published(path)
    text = str(e.value)
    assert "\n" not in text and text.startswith(f"{path}: "), text
    return text.removeprefix(f"{path}: ")


def _edited(tmp_path: Path, edit: Any) -> str:
    doc = _doc(tmp_path)
    edit(doc)
    path = tmp_path / "reference.json"
    path.write_text(json.dumps(doc))
    return _refused(path)


def test_missing_file_directory_and_too_big(tmp_path: Path) -> None:
    with pytest.raises(MissingReference):
        read_published(tmp_path / "none.json")
    assert _refused(tmp_path / "none.json").startswith("no such file (`make reference`")
    (tmp_path / "dir.json").mkdir()
    assert _refused(tmp_path / "dir.json") == "is a directory, not a regular file"
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_BYTES + 1))
    assert _refused(big) == f"is larger than {MAX_BYTES:,} bytes"
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert _refused(fifo) == "is a FIFO, not a regular file"


def test_not_json_and_another_format_or_version(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert _refused(bad).startswith("not JSON")
    bad.write_text("[1, 2]")
    assert _refused(bad).startswith(f"not a {PUBLISHED_FORMAT} file")
    assert _edited(tmp_path, lambda d: d.update(format="paohuzi-run")).startswith(
        f"not a {PUBLISHED_FORMAT} file"
    )
    assert _edited(tmp_path, lambda d: d.update(version=2)).startswith(
        "version 2 of the format, this reader takes 1"
    )


def test_a_missing_unknown_or_odd_field(tmp_path: Path) -> None:
    def figure(d: dict[str, Any]) -> dict[str, Any]:
        f: dict[str, Any] = d["presets"]["hunan"]["figures"]
        return f

    assert _edited(tmp_path, lambda d: figure(d).pop("win")) == (
        "field presets.hunan.figures.win is missing"
    )
    assert _edited(tmp_path, lambda d: d.pop("scale")) == "field scale is missing"
    assert _edited(tmp_path, lambda d: d["presets"]["hunan"].update(extra=1)) == (
        "field presets.hunan.extra is unknown"
    )
    assert _edited(tmp_path, lambda d: d["presets"]["hunan"].update(hands="many")) == (
        "field presets.hunan.hands: expected an integer, got 'many'"
    )
    assert _edited(tmp_path, lambda d: figure(d)["win"].update(lo="0.1")).startswith(
        "field presets.hunan.figures.win.lo: expected a number"
    )
    # a rate where a mean belongs, and a rate of more than its n
    assert "figures.huxi.kind" in _edited(tmp_path, lambda d: figure(d)["huxi"].update(kind="rate"))
    assert _edited(tmp_path, lambda d: figure(d)["zimo"].update(k=10**6)) == (
        f"field presets.hunan.figures.zimo: k {10**6} is more than n"
        f" {_doc(tmp_path)['presets']['hunan']['figures']['zimo']['n']}"
    )


def test_nan_is_refused(tmp_path: Path) -> None:
    doc = _doc(tmp_path)
    doc["presets"]["hunan"]["figures"]["score"]["hi"] = math.nan
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(doc))  # Python writes NaN; JSON has none
    assert _refused(path).startswith(
        "field presets.hunan.figures.score.hi: expected a finite number, got nan"
    )
