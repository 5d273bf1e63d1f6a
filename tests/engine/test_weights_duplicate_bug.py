"""Issue 59, risk 2: a weights file with a key twice was read, the last one winning (which
of two values a table plays should not depend on the order of its lines): refused with one
line naming the file and the key, at every level of the document, by every reader."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.errors import InvalidNotation
from engine.policies import weights as W


def _text(policy: str = "heuristic") -> str:
    return json.dumps(W.weights_document(W.defaults(policy)), indent=1)


@pytest.mark.parametrize(
    "edit, key",
    [
        (lambda t: t.replace('"margin": -25.0,', '"margin": -25.0,\n  "margin": -5,'), "margin"),
        (lambda t: t.replace('"policy": "heuristic",', '"policy": "x",\n "policy": "heuristic",'),
         "policy"),
        (lambda t: t.replace('"weights": {', '"weights": {},\n "weights": {'), "weights"),
    ],
)  # fmt: skip
def test_weights_duplicate_key_bug(tmp_path: Path, edit: Callable[[str], str], key: str) -> None:
    path = tmp_path / "dup.json"
    text = edit(_text())
    assert text != _text() and text.count(f'"{key}"') == 2
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidNotation) as e:
        W.read_weights(path, "heuristic")
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg and f"{key!r}" in msg and "twice" in msg, msg
    with pytest.raises(InvalidNotation, match="twice"):  # a spec reads it the same way
        W.load_spec(f"heuristic@{path}")


def test_shipped_weight_sets_still_load() -> None:
    names = sorted(W.SHIPPED_DIR.glob("*.json"))
    assert len(names) >= 8
    for path in names:
        name, _, policy = path.stem.rpartition("-")
        assert W.load_spec(f"{policy}@{name}").policy == policy
