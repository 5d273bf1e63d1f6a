"""Published reference files (``reference/reference.json``) without playing the report's runs:
each preset's figures made up here and written by the writer itself
(:func:`replay.reference.published.published`), for the reader's tests and the dashboard's
Reference page (AppTest and the browser)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from replay.analysis.figures.results import Mean, Rate
from replay.reference.plan import SCALES, by_section, studies

SMALL = SCALES["small"]


def figures(hands: int = 2000, run: str = "preset.hunan-0123abcd", **over: Any) -> Any:
    """One study's figures as the writer reads them (``document.Gathered``'s parts): rates
    and means of ``hands`` hands, any of them replaced by ``over`` (by its name in the file:
    ``win``, ``huangzhuang``, ``dealer_win`` (a :class:`Mean` of the hands), ``dealer_adv``,
    ``zimo``, ``huxi``, ``score``, ``decisions_per_hand``)."""
    wins = round(0.45 * hands)
    f = {
        "win": Rate.of(wins, hands),
        "huangzhuang": Rate.of(hands - wins, hands),
        "dealer_win": Mean(0.17, 0.155, 0.185, hands),
        "dealer_adv": Mean(0.02, 0.0, 0.04, hands),
        "zimo": Rate.of(round(0.33 * wins), wins),
        "huxi": Mean(20.5, 20.2, 20.8, wins),
        "score": Mean(4.2, 3.9, 4.5, wins),
        "decisions_per_hand": Mean(33.0, 32.6, 33.4, hands),
    }
    f.update(over)
    return SimpleNamespace(
        recorded=SimpleNamespace(run=run, hands=hands),
        stats=SimpleNamespace(
            outcomes={"win": f["win"], "huangzhuang": f["huangzhuang"]}, zimo=f["zimo"]
        ),
        events=SimpleNamespace(decisions_per_hand=f["decisions_per_hand"]),
        means={k: f[k] for k in ("dealer_win", "dealer_adv", "huxi", "score")},
    )


def preset_studies(presets: Iterable[str]) -> list[Any]:
    """The report's per-preset studies (small scale) of ``presets``."""
    wanted = set(presets)
    return [s for s in by_section(studies(SMALL), "preset") if s.preset in wanted]


def write_reference(path: Path, got: dict[str, Any] | None = None) -> Path:
    """``path`` written by the writer, with the figures ``got`` (preset → :func:`figures`;
    default: every preset of the report with the default figures)."""
    from replay.reference.published import published

    got = got or {s.preset: figures(run=f"preset.{s.preset}-0123abcd")
                  for s in by_section(studies(SMALL), "preset")}  # fmt: skip
    chosen = preset_studies(got)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        published(SMALL, chosen, {s.key: got[s.preset] for s in chosen}), encoding="utf-8"
    )
    return path
