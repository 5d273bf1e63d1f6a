"""Duplicate comparisons of played hands, kept in their run's manifest (docs/LOG_FORMAT.md
§15): for a hand a person played (``paohuzi play``, the dashboard's Play page), each bot's
score in the person's seat on the same deal, the other seats and every seed unchanged.

The manifest's ``comparisons`` list holds one entry per compared hand — ``hand``, ``seat``
(the person's) and ``scores`` (``policy``, ``score``), in the order the bots were asked —
checked with the rest of the manifest on every read. A comparison made again replaces the
hand's entry; it is written under the run's lock like every manifest change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The manifest key.
COMPARISONS = "comparisons"


@dataclass(frozen=True)
class Comparison:
    """One hand's comparison: the person's seat and ``(bot, score)`` in the order asked."""

    hand: int
    seat: int
    scores: tuple[tuple[str, int], ...]

    def to_entry(self) -> dict[str, Any]:
        return {
            "hand": self.hand,
            "seat": self.seat,
            "scores": [{"policy": p, "score": s} for p, s in self.scores],
        }

    def line(self, you: int) -> str:
        """``the same deal: you +12 · heuristic +6 · tuned-hunan +6 · search@64/learned@hunan
        +9`` (``you``: the person's own score)."""
        cells = [f"you {you:+d}"]
        cells += [f"{bot.removeprefix('heuristic@')} {s:+d}" for bot, s in self.scores]
        return "the same deal: " + " · ".join(cells)

    def to_dict(self, you: int) -> dict[str, Any]:
        """The JSON of ``paohuzi review`` and the service: the entry and the person's score."""
        return {**self.to_entry(), "you": you}

    @classmethod
    def of_entry(cls, entry: dict[str, Any]) -> Comparison:
        scores = tuple((str(x["policy"]), int(x["score"])) for x in entry["scores"])
        return cls(int(entry["hand"]), int(entry["seat"]), scores)


def comparison_of(manifest: dict[str, Any], hand: int) -> Comparison | None:
    """The stored comparison of ``hand`` (the last entry for it), or None."""
    found = None
    for e in manifest.get(COMPARISONS) or ():
        if int(e.get("hand", -1)) == hand:
            found = e
    return None if found is None else Comparison.of_entry(found)


def store_comparison(
    run_path: Path, hand: int, seat: int, scores: Sequence[tuple[str, int]], wait: float = 60.0
) -> Comparison:
    """List ``hand``'s comparison in the run's manifest (replacing an older one), under the
    run's lock (waiting up to ``wait`` s for another writer: :class:`RunBusy` after)."""
    from replay.store.catalog import refresh_after_write
    from replay.store.manifest import RunLock, now, read_manifest, write_manifest

    got = Comparison(hand, seat, tuple((str(p), int(s)) for p, s in scores))
    with RunLock(Path(run_path), wait):
        manifest = read_manifest(Path(run_path))
        kept = [e for e in manifest.get(COMPARISONS) or () if int(e["hand"]) != hand]
        manifest[COMPARISONS] = [*kept, got.to_entry()]
        manifest["updated"] = now()
        write_manifest(Path(run_path), manifest)
    refresh_after_write(Path(run_path))
    return got


def check_comparisons(manifest: dict[str, Any]) -> list[str]:
    """What ``paohuzi verify`` finds wrong with a run's comparisons, one line each: a hand
    the run does not hold, a seat the rules do not have, a hand listed twice."""
    total = sum(int(s["hands"]) for s in manifest.get("shards") or ())
    players = int((manifest.get("rules") or {}).get("players", 3))
    out, seen = [], set()
    for e in manifest.get(COMPARISONS) or ():
        h, seat = int(e["hand"]), int(e["seat"])
        if h >= total:
            out.append(f"comparison of hand {h}: the run holds {total:,} hand{'s' * (total != 1)}")
        elif seat >= players:
            out.append(f"comparison of hand {h}: seat {seat}, the rules have {players} seats")
        elif h in seen:
            out.append(f"comparison of hand {h} is listed twice")
        seen.add(h)
    return out
