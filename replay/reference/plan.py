"""What the reference statistics are computed from (``paohuzi report``, docs/REFERENCE.md):
the runs, each a :class:`Study` — a preset (with at most one rule switched), the policies at
the table, a seed and a number of hands — at a :class:`Scale`.

* **per preset**: the strongest fast policy of the preset (:func:`strongest`) in every seat,
  sessions of 8 hands as people play them;
* **rule effects**: the hunan preset and each switch of RULES Appendix B that applies to it,
  one at a time, every run on the same deals (same seed, sessions of one hand, so deal d is
  the same deck with the same dealer in every run) and compared with the hunan run deal by
  deal. ``huangzhuang_rotate`` is left out: it moves who deals after a 荒庄, which
  one-hand sessions never reach;
* **strength effects**: the hunan preset under each built-in policy and the shipped sets in
  every seat, on the same deals as each other (same seed), so readers see how much each
  figure depends on how well the table plays.

A run's name is its study's key and a digest of its identity and of its policy's table, so
the same study at the same scale finds its run again (resumed if it was cut short, used as it
is if complete) and another scale, seed or shipped set makes another run.

>>> [s.key for s in studies(SCALES["small"])][:3]
['preset.hunan', 'preset.hunan-basic', 'preset.hunan-full']
>>> strongest("hunan"), strongest("hunan-basic")
('learned@hunan', 'heuristic')
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from engine.policies import weights as W
from engine.rules import find_rules
from replay.record.spec import RunSpec, resolve_tables

#: The presets of the per-preset section, in the document's order.
PRESETS = ("hunan", "hunan-basic", "hunan-full", "hunan-4p", "luzhou")

#: The rule switches of the rule-effects section (RULES Appendix B), from the hunan preset:
#: (key, ``--set`` overrides, what it says).
SWITCHES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("min_huxi-10", ("min_huxi=10",), "10 胡息 to win instead of 15"),
    ("huayang-basic", ("huayang=basic",), "花样 basic (fewer 名堂)"),
    ("huayang-full", ("huayang=full",), "花样 full (every 名堂)"),
    ("hu_on_discards", ("hu_on_discards=true",), "胡 on another seat's discard"),
    ("one_five_ten", ("one_five_ten=true",), "一五十 counts as a 一句话"),
    ("no-chouhu", ("chouhu=false",), "no 臭胡 (a passed 胡 may be taken later)"),
    ("peng_compulsory", ("peng_compulsory=true",), "a legal 碰 is compulsory"),
    ("tianhu-plain", ("tianhu_formula=plain",), "天胡 scored as an ordinary 胡"),
)

#: The policies of the strength-effects section, weakest first (the search last).
STRENGTHS = ("random", "greedy", "heuristic", "heuristic@tuned-hunan", "learned@hunan")


@dataclass(frozen=True)
class Scale:
    """How many hands each kind of study plays, and the search's budget."""

    name: str
    preset_hands: int  # per preset (hunan: hunan_hands)
    hunan_hands: int
    effect_hands: int  # per rule switch, and the hunan run they are compared with
    strength_hands: int  # per policy of the strength section
    search_hands: int  # the search policy's run of the strength section
    search: str


SCALES = {
    "full": Scale("full", 2_000_000, 10_000_000, 1_000_000, 200_000, 1_500, "search@64"),
    # make test: every section, table and chart, from a few minutes of play
    "small": Scale("small", 2_000, 4_000, 2_000, 1_000, 12, "search@2"),
}


def strongest(preset: str) -> str:
    """The strongest fast policy of ``preset``: its shipped ``learned`` set, else its shipped
    ``heuristic@tuned-PRESET`` set, else ``heuristic``."""
    if preset in W.shipped_names("learned"):
        return f"learned@{preset}"
    if f"tuned-{preset}" in W.shipped_names("heuristic"):
        return f"heuristic@tuned-{preset}"
    return "heuristic"


@dataclass(frozen=True)
class Study:
    """One run of the report: ``section`` (``preset``, ``effect``, ``strength``), its
    ``key`` (unique), a label for the document, the preset and overrides, the policy in
    every seat, the seed, the hands and the session length."""

    section: str
    key: str
    label: str
    preset: str
    overrides: tuple[str, ...]
    policy: str
    seed: int
    hands: int
    session_length: int

    def spec(self) -> RunSpec:
        """The run's spec (its tables read now from the shipped sets)."""
        rules = find_rules(self.preset).with_overrides(self.overrides)
        policies = (self.policy,) * rules.players
        spec = RunSpec(rules=rules, policies=policies, seed=self.seed, deals=self.hands,
                       session_length=self.session_length)  # fmt: skip
        return dataclasses.replace(spec, weights=resolve_tables(policies, {}))

    def run_name(self) -> str:
        """``ref-KEY-DIGEST``: a digest of the run's identity and of the tables its policy
        plays, so a shipped set changed since makes a new run."""
        spec = self.spec()
        tables = {key: table.as_dict() for key, table in spec.weights}
        text = json.dumps([spec.identity(), tables], sort_keys=True)
        return f"ref-{self.key}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


#: The seeds: one for the per-preset runs, one for the deals every rule switch is played on,
#: one for the strength runs.
PRESET_SEED, EFFECT_SEED, STRENGTH_SEED = 2027, 2028, 2029


def studies(scale: Scale) -> list[Study]:
    """Every run of the report at ``scale``, in the document's order."""
    out = []
    for preset in PRESETS:
        hands = scale.hunan_hands if preset == "hunan" else scale.preset_hands
        out.append(Study("preset", f"preset.{preset}", preset, preset, (), strongest(preset),
                         PRESET_SEED, hands, 8))  # fmt: skip
    base = strongest("hunan")
    out.append(Study("effect", "effect.hunan", "hunan (the baseline)", "hunan", (), base,
                     EFFECT_SEED, scale.effect_hands, 1))  # fmt: skip
    for key, overrides, label in SWITCHES:
        out.append(Study("effect", f"effect.{key}", label, "hunan", overrides, base,
                         EFFECT_SEED, scale.effect_hands, 1))  # fmt: skip
    for policy in (*STRENGTHS, scale.search):
        hands = scale.search_hands if policy == scale.search else scale.strength_hands
        out.append(Study("strength", f"strength.{policy.replace('@', '_')}", policy, "hunan",
                         (), policy, STRENGTH_SEED, hands, 1))  # fmt: skip
    return out


def by_section(all_studies: Sequence[Study], section: str) -> list[Study]:
    return [s for s in all_studies if s.section == section]
