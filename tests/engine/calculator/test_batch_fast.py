"""``score --batch --engine fast`` writes the bytes of ``--engine reference``, line for line:
on thousands of generated lines (wins, non-wins, every rule preset, ``--set`` defaults, per-line
``rules``/``set``, and every kind of bad line), respelled as other JSON writers spell them
(\\u escapes, ASCII cards), on the batch examples of score_examples, across chunk boundaries,
and up to a line that is too long; and which lines the compiled parser reads. Not
timing-based."""

from __future__ import annotations

import io
import json
import logging
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from score_examples import BATCH_LINES

from engine import calculator
from engine.calculator import fast
from engine.cards import CARD_CHARS, COPIES, NUM_KINDS, card_ascii
from engine.groups import EAT_SHAPES
from paohuzi.cli.main import main

MELD_NAMES = ("chi", "peng", "wei", "chouwei", "pao", "ti")
SOURCES = ("own", "other", "liang", "liang-dealer", "discard")
PRESETS = ("hunan", "hunan-basic", "hunan-full", "hunan-4p", "luzhou")
SETS = (
    "min_huxi=10",
    "min_huxi=15",
    "hu_on_discards=true",
    "one_five_ten=true",
    "huayang=full",
    "tianhu_formula=double",
    "players=4",
    "luzhou_di_mode=b",
    "nope=1",
    "min_huxi=x",
)


def _chars(kinds: list[int]) -> str:
    return "".join(CARD_CHARS[k] for k in kinds)


def _random_hand(rng: random.Random) -> dict[str, Any]:
    """Random cards and melds (rarely a win; any card count)."""
    avail = [COPIES] * NUM_KINDS
    melds = []
    for _ in range(rng.choice((0, 1, 2, 3, 4, 5))):
        name = rng.choice(MELD_NAMES)
        if name == "chi":
            shape = rng.choice(EAT_SHAPES)
            melds.append("chi:" + ",".join(CARD_CHARS[k] for k in rng.sample(shape, 3)))
            for k in shape:
                avail[k] -= 1
        else:
            face = rng.randrange(NUM_KINDS)
            avail[face] -= 4 if name in ("pao", "ti") else 3
            melds.append(f"{name}:{CARD_CHARS[face]}")
    hand = []
    for _ in range(rng.randint(0, 22)):
        faces = [f for f in range(NUM_KINDS) if avail[f] > 0]
        if not faces:
            break
        f = rng.choice(faces)
        avail[f] -= 1
        hand.append(f)
    req: dict[str, Any] = {"hand": _chars(hand), "melds": melds}
    if hand and rng.random() < 0.7:
        req["hand"] = _chars(hand[:-1])
        req["card"] = CARD_CHARS[hand[-1]]
    return req


def _mutate(rng: random.Random, req: dict[str, Any]) -> str | bytes:
    """One input line from a request, sometimes made unusual or wrong."""
    req = dict(req)
    r = rng.random()
    if r < 0.30:
        pass
    elif r < 0.36:
        req["source"] = rng.choice(SOURCES)
    elif r < 0.40:
        req.pop("card", None)
        req["source"] = rng.choice(("liang-dealer", "liang-dealer", "own", "other"))
    elif r < 0.46:
        req[rng.choice(("haidi", "dihu", "tianhu"))] = rng.choice((True, False, True, 1, None))
    elif r < 0.52:
        req["id"] = rng.choice(
            (7, -3, 0, 10**17, 10**19, "z", "a b", "牌", 1.5, True, None, [1], {"x": 1}, "")
        )
    elif r < 0.58:
        req["rules"] = rng.choice((*PRESETS, "nope", 3))
    elif r < 0.62:
        req["set"] = rng.choice(([rng.choice(SETS)], [], ["min_huxi=10", "players=4"], "x", [1]))
    elif r < 0.64:
        req["card"] = rng.choice((None, "", "壹贰", "s1", "貳", 3, "X"))
    elif r < 0.66:
        req["source"] = rng.choice((None, "OWN", "liang_dealer", " other", "nope", 1))
    elif r < 0.69:
        hand = req["hand"]
        i = rng.randrange(len(hand) + 1)
        req["hand"] = (
            hand[:i] + rng.choice(("X", "貳", "s1", "b10", " ", ",", "壹壹壹壹壹")) + hand[i:]
        )
    elif r < 0.71:
        req["hand"] = rng.choice((None, 12, ["壹"], ""))
    elif r < 0.75:
        bad = rng.choice(
            (
                "peng:X",
                "peng:三三三",
                "碰:三",
                "PENG:三",
                " pao:伍",
                "wei：柒",
                "chi:一,二,四",
                "chi:一二三",
                "chi:一, 二, 三",
                "ti:",
                "kan:三",
                3,
                None,
                "chi:壹,伍,拾",
                "chi:二,七,十",
            )
        )
        req["melds"] = [*req.get("melds", []), bad]
    elif r < 0.76:
        req["melds"] = rng.choice(("pao:伍", None, {}, 5))
    elif r < 0.77:
        req["melds"] = ["peng:三"] * rng.randint(17, 20)
    elif r < 0.78:
        req["colour"] = "red"
    elif r < 0.80:
        req.pop("hand")
    elif r < 0.81:
        return rng.choice(('["a list"]', "3", '"s"', "null", "{}", "[]"))
    elif r < 0.84:
        return rng.choice(HOSTILE)
    elif r < 0.85:  # more cards than a seat holds (RULES §7)
        req["hand"] = req["hand"] + rng.choice(("", "一", "一二"))
        req["melds"] = [*req.get("melds", []), rng.choice(("peng:拾", "pao:拾", "chi:贰,柒,拾"))]
    text = json.dumps(req, ensure_ascii=rng.random() < 0.03)
    r = rng.random()
    if r < 0.05:
        text = text.replace(", ", ",").replace(": ", ":")
    elif r < 0.08:
        text = text.replace(", ", " ,\t").replace("{", "{ \r")
    elif r < 0.10:
        text = "  " + text + " \t\x0b "
    elif r < 0.12:
        text = text[: rng.randrange(1, len(text))]  # truncated
    elif r < 0.13:
        text = text[:-1] + ",}"
    elif r < 0.14:
        text = text + " x"
    elif r < 0.15:
        text = text.replace('"hand"', '"h\\u0061nd"')
    elif r < 0.16:
        text = text.replace("{", '{"hand": "壹",', 1)  # "hand" twice
    elif r < 0.17:
        return "\ufeff" + text
    elif r < 0.18:
        b = text.encode()
        i = rng.randrange(len(b))
        return b[:i] + rng.choice((b"\xff", b"\xe5", b"\xed\xa0\x80", b"\x00")) + b[i:]
    elif r < 0.19:
        return rng.choice(("", "   ", "\t"))
    return text


#: Lines that once crashed a batch or made its output invalid JSON (issue 20, item 9).
HOSTILE: tuple[str | bytes, ...] = (
    '{"hand": "一二三", "id": "\\ud800"}',  # a lone surrogate in the echoed id
    '{"hand": "一二三", "id": ["a", "\\udfff"]}',
    '{"hand": "一二三", "id": "\ud800"}',  # the same, raw (a str line)
    '{"hand": "一二三", "id": 1e400}',  # Infinity
    '{"hand": "一二三", "id": [NaN]}',
    '{"hand": "一二三", "id": -Infinity}',
    '{"hand": "一二三", "id": ' + "7" * 5000 + "}",  # over Python's int limit
    '{"hand": "一二三", "id": ' + "7" * 400 + "}",
    '{"hand": "一二三", "haidi": 1e400}',
    "\ufeff" + '{"hand": "一二三"}',  # a byte-order mark
    '{"hand": "一二三"}\r\n',
    b'{"hand": "\x00"}',
    b"\x00\x00",
    b'{"hand": "\xed\xa0\x80"}',  # a surrogate in UTF-8 bytes: not UTF-8
    b"\xff\xfe{}",
    "",
    "\r\n",
    '{"hand": "一二三", "set": ["' + "x" * 3000 + '=1"]}',
    '{"hand": "一二三", "rules": "' + "x" * 3000 + '"}',
    '{"hand": "一二三", "' + "k" * 3000 + '": 1}',
    '{"hand": "一二三", "melds": [' + ",".join(["1"] * 3000) + "]}",
    '{"hand": "一二三", "card": "' + "x" * 3000 + '"}',
    '{"hand": "一二三", "source": "\\udc80"}',
)

_ASCII = {ch: card_ascii(k) for k, ch in enumerate(CARD_CHARS)}


def _ascii_cards(rng: random.Random, text: Any) -> Any:
    """``text`` with some of its cards in ASCII notation, between random separators."""
    if not isinstance(text, str):
        return text
    sep = rng.choice(("", " ", " ", ",", " , ", "\t", "|"))
    return "".join(
        _ASCII[ch] + sep if ch in _ASCII and rng.random() < 0.8 else ch for ch in text
    ).rstrip(sep if rng.random() < 0.5 else "")


def _respell(rng: random.Random, line: str | bytes) -> str | bytes:
    """A line as another JSON writer (or a person) might spell it: \\u escapes in either case,
    surrogate pairs, the short escapes, ASCII card codes (upper case too)."""
    if isinstance(line, bytes):
        return line
    try:
        req = json.loads(line)
    except ValueError:
        req = None
    if isinstance(req, dict) and rng.random() < 0.5:
        for key in ("hand", "card"):
            if key in req:
                req[key] = _ascii_cards(rng, req[key])
        if isinstance(req.get("melds"), list):
            req["melds"] = [_ascii_cards(rng, m) for m in req["melds"]]
        if rng.random() < 0.1 and isinstance(req.get("hand"), str):
            req["hand"] = req["hand"].upper()
        if rng.random() < 0.2:
            req["id"] = rng.choice(("牌\U0001f600", 'a"b\\c/d', "\x1f\x7f\n\t\b\f", "\u2028", "é"))
        line = json.dumps(req, ensure_ascii=rng.random() < 0.5)
    out = []
    for ch in line:
        r = rng.random()
        if ch.isascii() and ch.isalnum() and r < 0.05:  # in a string or not: both must agree
            out.append(rng.choice(("\\u%04x", "\\u%04X")) % ord(ch))
        elif not ch.isascii() and r < 0.3:
            code = ord(ch)
            if code > 0xFFFF:
                code -= 0x10000
                out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
            else:
                out.append(f"\\u{code:04X}")
        elif ch == "/" and r < 0.5:
            out.append("\\/")
        else:
            out.append(ch)
    text = "".join(out)
    if rng.random() < 0.02:  # a lone surrogate: json.loads keeps it, never a card
        lone = rng.choice(("\\ud800", "\\udc00", "\\ud83d\\u0041"))
        text = text.replace('"hand": "', '"hand": "' + lone, 1)
    return text


def generated_lines(n: int, seed: int, respell: bool = False) -> list[str | bytes]:
    rng = random.Random(seed)
    real = calculator.generate_batch_lines(n // 2, seed)
    out: list[str | bytes] = []
    for i in range(n):
        req = json.loads(real[i // 2]) if i % 2 == 0 else _random_hand(rng)
        line = _mutate(rng, req)
        out.append(_respell(rng, line) if respell else line)
    return out


def _run(lines: list[Any], engine: str, rules: str, overrides: tuple[str, ...]) -> Any:
    buf = io.BytesIO()
    stats = calculator.run_batch(lines, buf, rules=rules, overrides=overrides, engine=engine)
    return buf.getvalue(), stats


def assert_same(lines: list[Any], rules: str = "hunan", overrides: tuple[str, ...] = ()) -> int:
    """Both engines on ``lines``; the number of output lines."""
    fast, fstats = _run(lines, "fast", rules, overrides)
    ref, rstats = _run(lines, "reference", rules, overrides)
    if fast != ref:
        f, r = fast.split(b"\n"), ref.split(b"\n")
        for i, (a, b) in enumerate(zip(f, r)):
            if a != b:
                raise AssertionError(
                    f"output line {i + 1} differs ({rules} {overrides}):\n"
                    f"  fast:      {a.decode(errors='replace')}\n"
                    f"  reference: {b.decode(errors='replace')}"
                )
        raise AssertionError(f"{len(f)} output lines from fast, {len(r)} from the reference")
    assert fstats == rstats
    return ref.count(b"\n")


@pytest.mark.parametrize(
    ("rules", "overrides", "seed"),
    [
        ("hunan", (), 1),
        ("hunan-full", ("min_huxi=10",), 2),
        ("hunan-basic", (), 3),
        ("hunan-4p", ("hu_on_discards=true",), 4),
        ("luzhou", (), 5),
        ("luzhou", ("luzhou_di_mode=b", "one_five_ten=true"), 6),
    ],
)
def test_generated_lines_are_byte_identical(
    rules: str, overrides: tuple[str, ...], seed: int
) -> None:
    lines = generated_lines(1500, seed)
    assert assert_same(lines, rules, overrides) > 1000


def test_generated_lines_cover_wins_non_wins_and_errors() -> None:
    out, stats = _run(generated_lines(1500, 1), "fast", "hunan", ())
    got = [json.loads(s) for s in out.decode().splitlines()]
    assert stats.errors > 100 and stats.results > 700
    assert any(g.get("win") for g in got) and any(g.get("win") is False for g in got)
    assert any(g.get("deng") for g in got) and any("id" in g for g in got)
    reasons = {g.get("reason") for g in got}
    assert {"card_count", "no_split", "below_min", "own_pair", "discard"} <= reasons
    errors = " ".join(g["error"] for g in got if "error" in g)
    for needle in ("bad JSON", "not UTF-8", "unknown card", "malformed meld", "copies of",
                   "unknown key", 'missing "hand"', "unknown source", "needs a hu card",
                   "must be a", "expected a JSON object", "unknown rule", "blank line",
                   "a seat holds at most", "lone surrogate", "NaN or Infinity",
                   "more than 4,300 digits"):  # fmt: skip
        assert needle in errors, needle


def test_the_score_cli_batch_examples() -> None:
    assert assert_same(BATCH_LINES) == len(BATCH_LINES)
    assert assert_same([s.encode() for s in BATCH_LINES], "luzhou", ("min_huxi=10",)) > 0


def test_chunk_boundaries_and_line_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast, "_FAST_CHUNK", 7)
    assert_same([s.encode() if isinstance(s, str) else s for s in generated_lines(300, 9)])


def test_line_too_long_is_answered_by_both_and_the_batch_goes_on() -> None:
    good = [s.encode() for s in calculator.generate_batch_lines(30, 2)]
    data = b"\n".join([*good, b'{"hand": "' + "壹".encode() * 200 + b'"}', *good]) + b"\n"
    results = []
    for engine in ("fast", "reference"):
        buf = io.BytesIO()
        calculator.run_batch(calculator.read_lines(io.BytesIO(data), 300), buf, engine=engine)
        results.append(buf.getvalue())
    assert results[0] == results[1]
    rows = results[0].decode().splitlines()
    assert len(rows) == 61 and rows[:30] == rows[31:]
    assert json.loads(rows[30]) == {
        "line": 31,
        "error": "longer than 300 bytes, the limit (raise it with --max-line-bytes)",
    }


def test_cli_engines_write_the_same_bytes(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    lines = generated_lines(400, 11)
    path.write_bytes(b"\n".join(s if isinstance(s, bytes) else s.encode() for s in lines))
    outs = []
    for engine in ("fast", "reference", "auto"):
        r = CliRunner().invoke(
            main, ["score", "--batch", str(path), "--engine", engine, "--set", "min_huxi=10"]
        )
        assert r.exit_code == 0, r.output
        outs.append(r.stdout_bytes)
    assert outs[0] == outs[1] == outs[2]
    r = CliRunner().invoke(main, ["score", "--help"])
    assert "--engine" in r.stdout and "reference" in r.stdout


def test_numba_cache_moves_to_the_user_when_the_tree_is_read_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import numba.core.config

    from engine.fast import cache

    config: Any = numba.core.config
    monkeypatch.setattr(config, "CACHE_DIR", config.CACHE_DIR)
    monkeypatch.setattr(cache, "_configured", False)
    monkeypatch.setattr(cache, "_HERE", Path("/proc/self/paohuzi"))  # mkdir fails there
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    # configure() sets NUMBA_CACHE_DIR itself: recorded first, so the test's end unsets it (a
    # bare delenv of an unset variable records nothing, and the temporary cache leaked into
    # every later process of this worker, which compiled the whole engine again)
    monkeypatch.setenv("NUMBA_CACHE_DIR", "")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    want = str(tmp_path / "paohuzi" / "numba")
    assert cache.configure() == want
    assert want == config.CACHE_DIR and (tmp_path / "paohuzi" / "numba").is_dir()
    monkeypatch.setattr(cache, "_configured", False)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))  # the user's choice is kept
    assert cache.configure() == str(tmp_path / "mine")


def test_auto_falls_back_to_the_reference_when_the_scorer_cannot_be_built(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: Any) -> None:
        raise RuntimeError("no LLVM")

    monkeypatch.setattr(fast, "_FastScorer", broken)
    lines = [s.encode() for s in BATCH_LINES]
    ref, _ = _run(lines, "reference", "hunan", ())
    assert _run(lines, "auto", "hunan", ())[0] == ref
    assert "no LLVM" in capsys.readouterr().err
    with pytest.raises(RuntimeError):
        _run(lines, "fast", "hunan", ())
    assert _run([], "fast", "hunan", ()) == (b"", calculator.BatchStats(0, 0, 0))


def test_compile_notice_only_before_a_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.fast import batch_score, cache
    from engine.fast import hu as fk

    tables = batch_score.Tables({k: (int(s), t) for k, (s, t) in calculator.SOURCES.items()}, [])
    params = fk.rule_params(calculator.load_rules()[1])
    batch_score.warm_up(tables, params, io.StringIO())  # compiled (or loaded) now
    for cached, said in ((True, ""), (False, "compiling the fast scorer")):
        monkeypatch.setattr(cache, "is_cached", lambda ds, c=cached: c)
        buf = io.StringIO()
        batch_score.warm_up(tables, params, buf)
        assert said in buf.getvalue() and buf.getvalue().count("\n") == (0 if cached else 1)


# --------------------------------------------------------------------------- JSON spellings


def _fast_counts(caplog: pytest.LogCaptureFixture) -> tuple[int, int]:
    """(lines by the compiled parser, lines by the reference parser) of the last fast batch."""
    rec = [r for r in caplog.records if r.name == "engine.calculator.fast"][-1]
    return rec.compiled, rec.python  # type: ignore[attr-defined]


@pytest.mark.parametrize("spelling", ["utf8", "escaped", "ascii"])
def test_every_json_spelling_takes_the_compiled_path(
    spelling: str, caplog: pytest.LogCaptureFixture
) -> None:
    # \\u escapes (json.dumps' default) and s1…b10 cards went to the reference parser
    caplog.set_level(logging.DEBUG, logger="engine.calculator.fast")
    lines = [s.encode() for s in calculator.generate_batch_lines(2000, 7, spelling)]
    assert assert_same(lines) == 2000
    assert _fast_counts(caplog) == (2000, 0)
    utf8 = [s.encode() for s in calculator.generate_batch_lines(2000, 7)]
    assert _run(lines, "fast", "hunan", ()) == _run(utf8, "fast", "hunan", ())


SPELLED = [  # (line, read by the compiled parser)
    ('{"h\\u0061nd": "\\u58f9\\u8D30\\u53c1", "card": "\\u62fe"}', True),
    ('{"hand": "s1 s2 s3,b1|b2;b3/b4\\tb5", "melds": ["chi:s7, b7, s7"], "card": "S10"}', True),
    ('{"hand": "s1s2s3b10b10", "melds": ["peng:b3b3b3", "ti:\\u4e03"], "card": "b1"}', True),
    ('{"hand": "一二三", "source": "\\u006f\\u0077\\u006e", "card": "s4"}', True),
    ('{"hand": "一二三", "id": "a\\"b\\\\c\\/d\\u001F\\b\\f\\n\\r\\t\\u007f"}', True),
    ('{"hand": "一二三", "id": "\\ud83d\\ude00\\u724c牌é"}', True),
    ('{"hand": "一二三\\udc00"}', False),  # a lone surrogate
    ('{"hand": "\\ud83d\\u4e00"}', False),
    ('{"hand": "一二三", "card": " s4"}', False),  # parse_card strips; left to it
    ('{"hand": "一二三", "card": "s4,"}', False),  # an error
    ('{"hand": "s11"}', False),
    ('{"hand": "s0 b3"}', False),
    ('{"hand": "一二三\\u0000"}', False),
    ('{"hand": "一二三", "melds": ["peng:\\u4e00\\u4e00"]}', False),
    ('{"hand": "\\u4e0"}', False),
    ('{"hand": "\\x41"}', False),
]


def test_escapes_and_ascii_cards_as_the_reference(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="engine.calculator.fast")
    for line, compiled in SPELLED:
        assert assert_same([line.encode()]) == 1, line
        assert _fast_counts(caplog) == ((1, 0) if compiled else (0, 1)), line


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_respelled_generated_lines_are_byte_identical(
    seed: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="engine.calculator.fast")
    lines = generated_lines(1500, seed, respell=True)
    assert assert_same(lines) > 1000
    compiled, python = _fast_counts(caplog)
    assert compiled > 400 and python > 300


@pytest.mark.parametrize("where", ["hand", "melds", "id"])
def test_deeply_nested_line_is_one_error_line_bug(where: str) -> None:
    # 30,000 nested brackets (under the line limit) ended the whole batch with a
    # RecursionError: no output at all, the earlier lines' answers included.
    deep = "[" * 30_000 + "]" * 30_000
    bad = {
        "hand": f'{{"hand": {deep}}}',
        "melds": f'{{"hand": "一二三", "melds": {deep}}}',
        "id": f'{{"hand": "一二三", "id": {deep}}}',
    }[where]
    lines = [b'{"hand": "\\u4e00\\u4e8c\\u4e09"}', bad.encode(), '{"hand": "一二三"}'.encode()]
    for engine in ("fast", "reference"):
        out, stats = _run(lines, engine, "hunan", ())
        rows = [json.loads(x) for x in out.decode().splitlines()]
        assert len(rows) == 3 and stats.lines == 3, engine
        assert rows[1] == {"line": 2, "error": "bad JSON: nested too deep"}, engine
        assert rows[0] == rows[2] and "win" in rows[0], engine
    assert assert_same(lines) == 3
