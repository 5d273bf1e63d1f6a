"""Requests shared by the ``paohuzi score`` tests: the issue's example, RULES.md §15's
examples as CLI arguments, and a batch of JSON lines (good, bad and blank) with its checked
output. A helper module, not a test module: the tests import it, none imports another."""

from __future__ import annotations

import json

ISSUE = [
    "壹贰叁柒捌玖六七八九九",
    "--meld",
    "pao:伍",
    "--meld",
    "peng:三",
    "--meld",
    "chi:二,七,十",
]
EX1 = ["壹贰叁四五六七八九陆柒捌贰柒", "-m", "chi:一,二,三", "-m", "peng:伍", "--card", "拾"]
EX2 = ["四五六四五六七八九陆柒捌贰柒", "-m", "chi:一,二,三", "-m", "peng:伍", "--card", "拾"]
EX4 = ["壹贰叁四五六七八九贰柒六六", "-m", "chi:一,二,三", "-m", "pao:伍", "--card", "拾"]
EX8 = ["壹贰叁一二三七八九四五", "-m", "chi:贰,柒,拾", "-m", "chi:二,七,十", "-m", "peng:拾"]


BATCH_LINES = [
    json.dumps(
        {"hand": ISSUE[0], "melds": ["pao:伍", "peng:三", "chi:二,七,十"]}, ensure_ascii=False
    ),
    json.dumps(
        {"hand": EX1[0], "melds": ["chi:一,二,三", "peng:伍"], "card": "拾", "source": "other"},
        ensure_ascii=False,
    ),
    "",
    '{"hand": "壹X"}',
    "{not json",
    '["a list"]',
    '{"melds": []}',
    '{"hand": "壹贰", "colour": "red"}',
    json.dumps(
        {"hand": EX2[0], "melds": ["chi:一,二,三", "peng:伍"], "card": "拾"}, ensure_ascii=False
    ),
    json.dumps(
        {
            "hand": EX1[0],
            "melds": ["chi:一,二,三", "peng:伍"],
            "card": "拾",
            "source": "own",
            "id": "z",
        },
        ensure_ascii=False,
    ),
    json.dumps(
        {"hand": EX4[0], "melds": ["chi:一,二,三", "pao:伍"], "card": "拾", "rules": "hunan"},
        ensure_ascii=False,
    ),
    '{"hand": "壹", "rules": "nope"}',
]


def check_batch_output(out: str) -> None:
    got = [json.loads(line) for line in out.splitlines()]
    assert len(got) == len(BATCH_LINES)  # every line is answered, the blank one too
    assert got.pop(2) == {"line": 3, "error": "blank line"}
    assert got[0] == {
        "win": True,
        "huxi": 19,
        "reason": None,
        "deng": None,
        "fan": None,
        "score": None,
    }
    assert got[1] == {"win": True, "huxi": 18, "reason": None, "deng": 2, "fan": 1, "score": 2}
    assert got[2]["line"] == 4 and "'X'" in got[2]["error"]
    assert got[3]["line"] == 5 and got[3]["error"].startswith("bad JSON")
    assert got[4] == {"line": 6, "error": "expected a JSON object"}
    assert got[5] == {"line": 7, "error": 'missing "hand"'}
    assert got[6]["line"] == 8 and "'colour'" in got[6]["error"]
    assert got[7]["win"] is False and got[7]["huxi"] == 12 and got[7]["reason"] == "below_min"
    assert got[8] == {
        "id": "z",
        "win": True,
        "huxi": 18,
        "reason": None,
        "deng": 3,
        "fan": 1,
        "score": 3,
    }
    assert got[9]["win"] is False and got[9]["huxi"] is None and got[9]["reason"] == "no_split"
    assert got[10]["line"] == 12 and "'nope'" in got[10]["error"]
