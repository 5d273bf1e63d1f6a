"""docs/RULES.md, the project's rule book, against the code that cites it and the engine.

* Every section (§8.4), choice (C29), worked example (Example 16) and appendix (Appendix B)
  that engine/, replay/, paohuzi/, dashboard/, tests/ or docs/*.md cite is a heading of the book.
  A § that belongs to another document is not the book's: one named just before it on the line
  (``STYLE §20``, ``docs/LOG_FORMAT.md §12``, ``RFC 9110 §13.1.2``, ``seed §5``; a ``]`` in
  between ends that: ``[seed §5] … §6.1`` is the book's), or after it
  (``§7.2 of docs/LOG_FORMAT.md``), or at the end of the line before, ahead of a chain of §s; a
  bare § in a document with numbered sections of its own (LOG_FORMAT.md) is that document's.
* The numbers of the book's tables that the engine also defines are the engine's: the deck and
  the deal (engine.cards), the 胡息 values (engine.groups), the 名堂 and their 番
  (engine.mingtang), every switch with its default and values and every preset (engine.rules).
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cards import (
    BIG_CHARS,
    COPIES,
    DEALT,
    DECK_SIZE,
    HAND_CARDS,
    NUM_KINDS,
    RED_KINDS,
    SMALL_CHARS,
    STOCK_SIZE,
    number,
    parse_cards,
)
from engine.errors import InvalidRules
from engine.groups import Group, GroupKind, huxi
from engine.mingtang import HUNAN_MINGTANG, MingTangContext
from engine.rules import _CHOICES, PRESETS, RuleSet, find_rules

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "docs" / "RULES.md"
SCANNED = ("engine", "replay", "paohuzi", "dashboard", "tests")
SUFFIXES = {".py", ".md", ".txt", ".js", ".css", ".html", ".sql", ".toml", ".yaml", ".yml"}

# ---------------------------------------------------------------------------------- citations

SECTION = re.compile(r"§ ?(\d+(?:\.\d+)*)")
CHOICE = re.compile(r"\bC(\d+)\b")
#: "Example 16", "Examples 8, 11 and 25", "Examples 16–18", "Ex. 1", "Example 21(b)".
EXAMPLE = re.compile(r"\b(?:Examples?|Ex\.) ?(\d+[a-z]?(?:(?:, ?| and |–|-)\d+[a-z]?)*)")
APPENDIX = re.compile(r"\b(?:Appendix|App\.) ([A-Z])\b")
#: C0/C1 as control characters, not choices.
CONTROLS = re.compile(r"\bC0\b|control|\bCSI\b")

#: A document named on a line: a Markdown file, an upper-case name right before a §
#: (``STYLE §20``, ``RULES §9``), an RFC, or the seed text (``seed §5``).
DOC_NAME = re.compile(
    r"\b(?P<md>[A-Z][A-Z0-9_]*)\.md\b"
    r"|\b(?P<bare>[A-Z][A-Z0-9_]{2,})(?= ?§)"
    r"|\b(?P<rfc>RFC) ?\d+"
    r"|\b(?P<seed>seed)(?= ?§)"
)
#: After ``§n``: "of docs/LOG_FORMAT.md".
OF_DOC = re.compile(r"\s+of\s+(?:docs/)?([A-Z][A-Z0-9_]*)\.md\b")
#: What may follow a document's name at the end of a line for the next line's §s to be its
#: own: more §s and their separators (``(RULES §2,``, ``docs/LOG_FORMAT.md``, ``](X.md)``).
CHAIN_TAIL = re.compile(r"[\s§\d.,;:()\[\]–-]*")


def _name(m: re.Match[str]) -> str:
    return m.group("md") or m.group("bare") or m.group("rfc") or m.group("seed")


def owner_of(line: str, start: int, end: int, previous: str, default: str) -> str:
    """The document a § at ``line[start:end]`` cites (see the module docstring)."""
    before = [m for m in DOC_NAME.finditer(line) if m.end() <= start]
    if before and "]" not in line[before[-1].end() : start]:  # "[seed §5] … (§6.1)": ours
        return _name(before[-1])
    after = OF_DOC.match(line, end)
    if after:
        return after.group(1)
    named = list(DOC_NAME.finditer(previous))
    if named and CHAIN_TAIL.fullmatch(previous[named[-1].end() :]):
        return _name(named[-1])
    return default


def cited_files() -> Iterator[Path]:
    """The files whose citations count (not this one: its examples are no citations)."""
    here = Path(__file__).resolve()
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in SUFFIXES or "__pycache__" in path.parts or path == here:
                continue
            if path.is_file():
                yield path
    yield from sorted((ROOT / "docs").glob("*.md"))


def expand_examples(text: str) -> Iterator[str]:
    for part in re.split(r", ?| and ", text):
        lo, _, hi = part.replace("-", "–").partition("–")
        a, b = int(re.match(r"\d+", lo)[0]), int(re.match(r"\d+", hi or lo)[0])
        yield from (str(n) for n in range(a, b + 1))


def citations() -> dict[tuple[str, str], list[str]]:
    """Every citation of the book: (kind, id) → where ("path:line")."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in cited_files():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        default = "RULES"
        if rel.startswith("docs/") and path.stem != "RULES" and re.search(r"^#+ \d", text, re.M):
            default = path.stem  # its own numbered sections
        previous = ""
        for n, line in enumerate(text.splitlines(), 1):
            where = f"{rel}:{n}"
            for m in SECTION.finditer(line):
                if owner_of(line, m.start(), m.end(), previous, default) == "RULES":
                    found[("§", m.group(1))].append(where)
            if not CONTROLS.search(line):
                for m in CHOICE.finditer(line):
                    found[("C", "C" + m.group(1))].append(where)
            for m in EXAMPLE.finditer(line):
                for k in expand_examples(m.group(1)):
                    found[("Example", k)].append(where)
            for m in APPENDIX.finditer(line):
                found[("Appendix", m.group(1))].append(where)
            previous = line
    return found


def label(kind: str, ident: str) -> str:
    """A citation as the text writes it: §8.4, C29, Example 16, Appendix B."""
    return {"§": f"§{ident}", "C": ident}.get(kind, f"{kind} {ident}")


def book_anchors() -> set[tuple[str, str]]:
    """The book's headings: ``## 8. …``/``### 8.4 …``, ``### Example 16: …``, ``### C29 …``,
    ``## Appendix B: …``; and any explicit ``{#id}`` (attr_list) on a heading."""
    out: set[tuple[str, str]] = set()
    for line in BOOK.read_text(encoding="utf-8").splitlines():
        h = re.match(r"#{1,6} +(.*)", line)
        if not h:
            continue
        title = h.group(1)
        if m := re.match(r"(\d+(?:\.\d+)*)\.? ", title):
            out.add(("§", m.group(1)))
        elif m := re.match(r"Example (\d+)\b", title):
            out.add(("Example", m.group(1)))
        elif m := re.match(r"(C\d+)\b", title):
            out.add(("C", m.group(1)))
        elif m := re.match(r"Appendix ([A-Z])\b", title):
            out.add(("Appendix", m.group(1)))
        for anchor in re.findall(r"\{#([^}\s]+)\}", title):
            out.add(("#", anchor))
    return out


@pytest.mark.parametrize(
    ("line", "previous", "default", "owner"),
    [
        ("the deal (RULES §3, C2)", "", "LOG_FORMAT", "RULES"),
        ("(§10.3 step 0)", "", "RULES", "RULES"),
        ("cards (STYLE §10).", "", "RULES", "STYLE"),
        ("facts (docs/LOG_FORMAT.md §12), the", "", "RULES", "LOG_FORMAT"),
        ("§10), computed from", '"""A shard\'s rows (docs/LOG_FORMAT.md', "RULES", "LOG_FORMAT"),
        (
            "§12, §13). Duplicate",
            "passes the deal to the next seat (RULES §2,",
            "LOG_FORMAT",
            "RULES",
        ),
        ("§2), and every shard", "schema: [LOG_FORMAT.md](LOG_FORMAT.md)", "RULES", "LOG_FORMAT"),
        ("its generation, §7.2 of docs/LOG_FORMAT.md: it", "", "RULES", "LOG_FORMAT"),
        ("(weak comparison, RFC 9110 §13.1.2)", "", "RULES", "RFC"),
        ("[seed §2 二.6, 二.9, §5 吃牌]", "", "RULES", "seed"),
        ("[seed §2 二.8], nobody can win on it (§6.1)", "", "RULES", "RULES"),
        (
            "the deck: byte p (§6) |",
            "| `huang_streak` | (RULES §2, C16) |",
            "LOG_FORMAT",
            "LOG_FORMAT",
        ),
    ],
)
def test_a_citation_belongs_to_the_document_it_names(
    line: str, previous: str, default: str, owner: str
) -> None:
    *_, m = SECTION.finditer(line)  # the line's last §
    assert owner_of(line, m.start(), m.end(), previous, default) == owner


def test_every_citation_of_the_book_is_one_of_its_headings() -> None:
    cited = citations()
    # the scan sees the code's citations at all (a broken pattern would pass vacuously)
    kinds = {kind for kind, _ in cited}
    assert kinds == {"§", "C", "Example", "Appendix"}, kinds
    assert len(cited) > 80, sorted(cited)
    anchors = book_anchors()
    missing = {
        label(kind, ident): places
        for (kind, ident), places in cited.items()
        if (kind, ident) not in anchors
    }
    report = "\n".join(
        f"  {what}: cited {len(places)} times, at {', '.join(places[:3])}"
        for what, places in sorted(missing.items())
    )
    assert not missing, f"cited but not a heading of docs/RULES.md:\n{report}"


def test_the_book_numbers_every_choice_and_example_without_gaps() -> None:
    anchors = book_anchors()
    choices = sorted(int(i[1:]) for k, i in anchors if k == "C")
    examples = sorted(int(i) for k, i in anchors if k == "Example")
    assert choices == list(range(1, len(choices) + 1)) and len(choices) >= 36, choices
    assert examples == list(range(1, len(examples) + 1)) and len(examples) >= 25, examples
    sections = {i for k, i in anchors if k == "§"}
    assert {str(n) for n in range(0, 16)} <= sections, sorted(sections)


# ------------------------------------------------------------------------ the book's numbers


@pytest.fixture(scope="module")
def book() -> str:
    return BOOK.read_text(encoding="utf-8")


def table(book: str, header: str, nth: int = 0) -> list[list[str]]:
    """The body rows (cells stripped) of the ``nth`` table whose header row starts with
    ``| header |``."""
    lines = book.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(f"| {header} |")]
    assert len(starts) > nth, f"no table #{nth} headed {header!r} in docs/RULES.md"
    rows = []
    for line in lines[starts[nth] + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def lead_int(cell: str) -> int:
    m = re.match(r"\d+", cell)
    assert m, f"no number at the start of {cell!r}"
    return int(m.group())


def test_the_deck_and_the_deal(book: str) -> None:
    assert int(re.search(r"The deck has (\d+) cards", book)[1]) == DECK_SIZE
    faces, copies = re.search(r"there are (\d+) faces of (\d+) copies", book).groups()
    assert (int(faces), int(copies)) == (NUM_KINDS, COPIES)
    rows = {r[0].split()[0]: r for r in table(book, "script")}
    assert parse_cards(rows["small"][1]) == list(range(10))
    assert parse_cards(rows["big"][1]) == list(range(10, NUM_KINDS))
    assert rows["small"][1].replace(" ", "") == SMALL_CHARS
    assert rows["big"][1].replace(" ", "") == BIG_CHARS
    red = parse_cards(rows["small"][3]) + parse_cards(rows["big"][3])
    assert set(red) == RED_KINDS
    m = re.search(r"faces with the number (\d+), (\d+) or (\d+) \([^)]*\), (\d+)\s+cards", book)
    assert {int(m[1]), int(m[2]), int(m[3])} == {number(k) for k in RED_KINDS}
    assert int(m[4]) == len(RED_KINDS) * COPIES
    deal = re.search(
        r"dealer gets \*\*(\d+)\*\* cards and each other player \*\*(\d+)\*\*; the remaining"
        r" \*\*(\d+)\*\*",
        book,
    )
    assert tuple(map(int, deal.groups())) == (HAND_CARDS + 1, HAND_CARDS, STOCK_SIZE)
    stock = re.search(r"positions (\d+)–(\d+) are the stock", book)
    assert (int(stock[1]), int(stock[2])) == (DEALT, DECK_SIZE - 1)


#: A face for each column of the 胡息 tables: small/big black, small/big red.
SMALL_BLACK, BIG_BLACK, SMALL_RED, BIG_RED = 0, 10, 1, 11


def same_face(kind: GroupKind, face: int) -> Group:
    return Group(kind, (face,) * (4 if kind in (GroupKind.PAO, GroupKind.TI) else 3))


def test_the_hunan_huxi_table(book: str) -> None:
    rules = find_rules("hunan")
    rows = {r[0].split(",")[0].split()[0]: r[1:] for r in table(book, "set")}
    kinds = {
        "碰": (GroupKind.PENG, GroupKind.PENG_HU),
        "偎": (GroupKind.WEI, GroupKind.CHOUWEI, GroupKind.KAN),
        "跑": (GroupKind.PAO,),
        "提": (GroupKind.TI,),
    }
    for name, group_kinds in kinds.items():
        small, big = map(lead_int, rows[name])
        for kind in group_kinds:
            # Hunan: the colour does not matter, only small or big
            for black, red, value in ((SMALL_BLACK, SMALL_RED, small), (BIG_BLACK, BIG_RED, big)):
                assert huxi(same_face(kind, black), rules) == value, (name, kind)
                assert huxi(same_face(kind, red), rules) == value, (name, kind, "red")
    small, big = map(lead_int, rows["the"])  # the runs 1-2-3 and 2-7-10
    for run in ((0, 1, 2), (1, 6, 9)):
        sentence = Group(GroupKind.SENTENCE, run)
        big_run = Group(GroupKind.SENTENCE, tuple(k + 10 for k in run))
        assert (huxi(sentence, rules), huxi(big_run, rules)) == (small, big), run
    zero = [lead_int(c) for c in rows["every"]]
    others = [
        Group(GroupKind.SENTENCE, (2, 3, 4)),
        Group(GroupKind.SENTENCE, (12, 13, 14)),
        Group(GroupKind.JIAO, (8, 8, 18)),
        Group(GroupKind.JIANG, (5, 5)),
    ]
    assert zero == [0, 0] and all(huxi(g, rules) == 0 for g in others)


def test_the_luzhou_huxi_tables(book: str) -> None:
    rules = find_rules("luzhou")
    faces = (SMALL_BLACK, BIG_BLACK, SMALL_RED, BIG_RED)
    kinds = {
        "碰": (GroupKind.PENG, GroupKind.PENG_HU),
        "坎": (GroupKind.KAN, GroupKind.WEI, GroupKind.CHOUWEI),
        "招": (GroupKind.PAO,),
        "壠": (GroupKind.TI,),
    }
    rows = {r[0].split()[0].rstrip(","): r[1:] for r in table(book, "set", nth=1)}
    for name, group_kinds in kinds.items():
        values = [lead_int(c) for c in rows[name]]
        for kind in group_kinds:
            assert [huxi(same_face(kind, f), rules) for f in faces] == values, (name, kind)
    runs = {r[0].split()[0]: [lead_int(c) for c in r[1:]] for r in table(book, "run")}
    with_1510 = dataclasses.replace(rules, one_five_ten=True)
    for name, cards, rs in (
        ("1-2-3", (0, 1, 2), rules),
        ("2-7-10", (1, 6, 9), rules),
        ("1-5-10", (0, 4, 9), with_1510),
    ):
        small = huxi(Group(GroupKind.SENTENCE, cards), rs)
        big = huxi(Group(GroupKind.SENTENCE, tuple(k + 10 for k in cards)), rs)
        assert [small, big] == runs[name], name
    assert runs["any"] == [0, 0]
    assert huxi(Group(GroupKind.JIAO, (8, 18, 18)), rules) == 0


def test_the_hunan_mingtang_tables(book: str) -> None:
    by_name = {m.name: m for m in HUNAN_MINGTANG}
    seen = set()
    for nth, level in enumerate(("basic", "half", "full")):
        for name, _, fan in table(book, "名堂", nth):
            if name not in by_name:
                assert name == "自摸" and "no 番" in fan  # 自摸 is no 名堂 (C33)
                continue
            m = by_name[name]
            assert m.level == level, name
            # the 番 at the pattern's threshold (大字胡: 18 big cards, 小字胡: 16 small)
            ctx = MingTangContext(red=0, big=18, small=16)
            assert m.fan_for(ctx) == lead_int(fan), name
            seen.add(name)
    assert seen == set(by_name)


def test_every_switch_with_its_default_and_values(book: str) -> None:
    default = RuleSet()
    rows = {r[0].strip("`"): r for r in table(book, "switch")}
    assert set(rows) == {f.name for f in dataclasses.fields(RuleSet)}
    for name, (_, stated, others, _) in rows.items():
        value = getattr(default, name)
        first = re.match(r"`?([^`:\s]+)", stated).group(1)
        if isinstance(value, bool):
            assert first == ("on" if value else "off"), name
            assert others == ("off" if value else "on"), name
        else:
            assert first == str(value), name
        if name in _CHOICES:
            pairs = re.findall(r"`([^`]+)`|\b(\d+)\b", stated + " " + others)
            listed = {a or b for a, b in pairs}
            assert {str(c) for c in _CHOICES[name]} <= listed, (name, listed)
        elif isinstance(value, int) and not isinstance(value, bool):
            lo, hi = map(int, re.match(r"(\d+) … (\d+)", others).groups())
            for ok in (lo, hi):
                RuleSet(**{name: ok})
            for bad in (lo - 1, hi + 1):
                with pytest.raises(InvalidRules):
                    RuleSet(**{name: bad})


def test_every_preset(book: str) -> None:
    rows = {r[0].strip("`"): r[1:] for r in table(book, "preset")}
    assert set(rows) == set(PRESETS)
    for name, (players, min_huxi, differs) in rows.items():
        preset = PRESETS[name]
        assert (int(players), int(min_huxi)) == (preset.players, preset.min_huxi), name
        overrides = re.findall(r"`(\w+=\w+)`", differs)
        assert PRESETS["hunan"].with_overrides(overrides) == preset, (name, overrides)
