"""docs/COMMANDS.md ("Reference statistics", the README's until issue 60) shows the strength
ladder of docs/REFERENCE.md (issue 45): the same table, line for line, between its markers —
so a regeneration that moves a rating moves the copy too. Without a published document the
page shows no ladder."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
#: The page that shows the copy.
PAGE = ROOT / "docs" / "COMMANDS.md"
START, END = "<!-- ladder: docs/REFERENCE.md -->", "<!-- /ladder -->"


def ladder_table(text: str) -> list[str]:
    """The ratings table of a REFERENCE.md's "Strength ladder" section, line by line."""
    section = text.split("\n## Strength ladder\n", 1)[1].split("\n## ", 1)[0]
    for block in section.split("\n\n"):
        if block.lstrip().startswith("| rank |"):
            return block.strip().splitlines()
    raise AssertionError("no ratings table in the ladder section")


def test_the_commands_page_shows_the_published_ladder() -> None:
    page = PAGE.read_text(encoding="utf-8")
    doc = ROOT / "docs" / "REFERENCE.md"
    if not doc.exists():
        assert START not in page, "docs/COMMANDS.md shows a ladder no document publishes"
        return
    assert START in page and END in page
    block = page.split(START, 1)[1].split(END, 1)[0]
    shown = [line for line in block.splitlines() if line.startswith("|")]
    assert shown == ladder_table(doc.read_text(encoding="utf-8"))
