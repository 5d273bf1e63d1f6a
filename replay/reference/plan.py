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
  figure depends on how well the table plays;
* **the ladders**: on each preset of :data:`LADDER_PRESETS`, every pair of the preset's ladder
  policies (:func:`ladder_policies`: the built-in ones, the preset's shipped sets, the
  searches) in a duplicate match (one seat the one, the others the other, seats rotated),
  the more expensive policy in the one seat;
* **skill against luck**: one duplicate run of a strong, a middling and a weak policy.

A bare ``search@N`` of a scale plays as a new run of its preset does (with the preset's
rollouts, :func:`engine.policies.search_policy.with_preset_rollout`), and the document
names it so. A run's name is its study's key and a digest of its identity and of its
policy's table, so the same study at the same scale finds its run again (resumed if it was
cut short, used as it is if complete) and another scale, seed or shipped set makes another
run.

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
from engine.policies.search_policy import is_search_spec, with_preset_rollout
from engine.rules import find_rules
from replay.record.spec import DEFAULT_SHARD_HANDS, RunSpec, resolve_tables

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
#: The built-in policies of every ladder, cheapest first (each preset's shipped sets follow,
#: then the scale's searches); the anchor of every ladder.
LADDER_BUILT_IN = ("random", "greedy", "heuristic")
ANCHOR = "heuristic"
#: The presets with a ladder: the ones with shipped sets of their own.
LADDER_PRESETS = ("hunan", "hunan-4p", "luzhou")
#: The table of the skill-against-luck run: strong, middling, weak.
SKILL_TABLE = ("learned@hunan", "heuristic", "greedy")
#: Hands per shard of a run with a search seat: small, so that both cores play it.
SEARCH_SHARD_HANDS = 48


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
    ladder_deals: int  # per pair of the ladder without a search
    #: the ladder's searches and the deals of each pair they play in
    ladder_searches: tuple[tuple[str, int], ...]
    skill_deals: int
    #: the presets with a ladder (of :data:`LADDER_PRESETS`)
    ladder_presets: tuple[str, ...] = LADDER_PRESETS


SCALES = {
    "full": Scale(
        "full",
        2_000_000,
        10_000_000,
        500_000,
        200_000,
        1_000,
        "search@64",
        20_000,
        (("search@16", 400), ("search@64", 200)),
        100_000,
    ),
    # make test: every section, table and chart, from a few minutes of play
    "small": Scale(
        "small",
        2_000,
        4_000,
        2_000,
        1_000,
        12,
        "search@2",
        150,
        (("search@2", 4), ("search@4", 3)),
        300,
        ("hunan", "luzhou"),
    ),
}


def shipped_sets(preset: str) -> list[str]:
    """The shipped sets of ``preset``, weaker first: ``heuristic@tuned-PRESET`` and
    ``learned@PRESET``, those that exist."""
    out = []
    if f"tuned-{preset}" in W.shipped_names("heuristic"):
        out.append(f"heuristic@tuned-{preset}")
    if preset in W.shipped_names("learned"):
        out.append(f"learned@{preset}")
    return out


def strongest(preset: str) -> str:
    """The strongest fast policy of ``preset``: its shipped ``learned`` set, else its shipped
    ``heuristic@tuned-PRESET`` set, else ``heuristic``."""
    return (shipped_sets(preset) or ["heuristic"])[-1]


@dataclass(frozen=True)
class Study:
    """One run of the report: ``section`` (``preset``, ``effect``, ``strength``, ``ladder``,
    ``skill``), its ``key`` (unique), a label for the document, the preset and overrides,
    the policies (one: in every seat; else one per seat), the seed, the hands (deals of a
    duplicate run), the session length, whether duplicate, the hands per shard."""

    section: str
    key: str
    label: str
    preset: str
    overrides: tuple[str, ...]
    policies: tuple[str, ...]
    seed: int
    hands: int
    session_length: int
    duplicate: bool = False
    shard_hands: int = DEFAULT_SHARD_HANDS

    @property
    def policy(self) -> str:
        """The policy of the first seat (of every seat when one is given)."""
        return self.policies[0]

    def spec(self) -> RunSpec:
        """The run's spec (its tables read now from the shipped sets)."""
        rules = find_rules(self.preset).with_overrides(self.overrides)
        seats = self.policies if len(self.policies) > 1 else self.policies * rules.players
        spec = RunSpec(rules=rules, policies=seats, seed=self.seed, deals=self.hands,
                       session_length=self.session_length, duplicate=self.duplicate,
                       shard_hands=self.shard_hands)  # fmt: skip
        return dataclasses.replace(spec, weights=resolve_tables(seats, {}))

    def run_name(self) -> str:
        """``ref-KEY-DIGEST``: a digest of the run's identity and of the tables its policy
        plays, so a shipped set changed since makes a new run."""
        spec = self.spec()
        tables = {key: table.as_dict() for key, table in spec.weights}
        text = json.dumps([spec.identity(), tables], sort_keys=True)
        return f"ref-{self.key}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


#: The seeds: one for the per-preset runs, one for the deals every rule switch is played on,
#: one for the strength runs, the ladder's and the skill run's.
PRESET_SEED, EFFECT_SEED, STRENGTH_SEED, LADDER_SEED, SKILL_SEED = 2027, 2028, 2029, 2030, 2031


def studies(scale: Scale) -> list[Study]:
    """Every run of the report at ``scale``, in the document's order."""
    out = []
    for preset in PRESETS:
        hands = scale.hunan_hands if preset == "hunan" else scale.preset_hands
        out.append(Study("preset", f"preset.{preset}", preset, preset, (), (strongest(preset),),
                         PRESET_SEED, hands, 8))  # fmt: skip
    base = strongest("hunan")
    out.append(Study("effect", "effect.hunan", "hunan (the baseline)", "hunan", (), (base,),
                     EFFECT_SEED, scale.effect_hands, 1))  # fmt: skip
    for key, overrides, label in SWITCHES:
        out.append(Study("effect", f"effect.{key}", label, "hunan", overrides, (base,),
                         EFFECT_SEED, scale.effect_hands, 1))  # fmt: skip
    searched = strength_search(scale)
    for policy in (*STRENGTHS, searched):
        search = policy == searched
        out.append(Study("strength", f"strength.{_key(policy)}", policy, "hunan", (), (policy,),
                         STRENGTH_SEED, scale.search_hands if search else scale.strength_hands,
                         1, shard_hands=SEARCH_SHARD_HANDS if search else DEFAULT_SHARD_HANDS))  # fmt: skip
    out += _ladder(scale)
    out.append(Study("skill", "skill", " vs ".join(SKILL_TABLE), "hunan", (), SKILL_TABLE,
                     SKILL_SEED, scale.skill_deals, 8, duplicate=True))  # fmt: skip
    return out


def ladder_policies(scale: Scale, preset: str = "hunan") -> list[str]:
    """The policies of ``preset``'s ladder, cheapest first: the built-in ones, the preset's
    shipped ``heuristic@tuned-PRESET`` and ``learned@PRESET`` sets, the scale's searches
    (with the rollouts a new run of the preset gives them).

    >>> ladder_policies(SCALES["full"], "luzhou")
    ['random', 'greedy', 'heuristic', 'heuristic@tuned-luzhou', 'learned@luzhou', 'search@16', 'search@64']
    >>> ladder_policies(SCALES["full"], "hunan")[-1]
    'search@64/learned@hunan'
    """
    return [*LADDER_BUILT_IN, *shipped_sets(preset), *_searches(scale, preset)]


def strength_search(scale: Scale) -> str:
    """The search of the strength section, as a new hunan run plays it (its rollouts:
    :func:`engine.policies.search_policy.with_preset_rollout`)."""
    return with_preset_rollout(scale.search, find_rules("hunan"))


def _searches(scale: Scale, preset: str) -> dict[str, int]:
    """The ladder's searches of ``preset`` as a new run of it plays them, and their deals."""
    rules = find_rules(preset)
    return {with_preset_rollout(s, rules): deals for s, deals in scale.ladder_searches}


def _key(policy: str) -> str:
    """A policy in a study's key: ``@`` as ``_``, a search's rollout policy left out (one
    search of a budget per section)."""
    head = policy.partition("/")[0] if is_search_spec(policy) else policy
    return head.replace("@", "_")


def _ladder(scale: Scale) -> list[Study]:
    """One duplicate match per pair of each preset's ladder: the more expensive policy
    (later in the ladder) in the first seat, the other in the rest; a pair with a search
    plays that search's deals (the smaller when both are searches) in small shards. The
    hunan ladder's keys are ``ladder.DEAR.CHEAP``, another preset's
    ``ladder-PRESET.DEAR.CHEAP``."""
    out = []
    for preset in scale.ladder_presets:
        deals = _searches(scale, preset)
        names = ladder_policies(scale, preset)
        seats = find_rules(preset).players
        prefix = "ladder" if preset == "hunan" else f"ladder-{preset}"
        for i, cheap in enumerate(names):
            for dear in names[i + 1 :]:
                searched = [deals[p] for p in (cheap, dear) if p in deals]
                out.append(Study(
                    "ladder", f"{prefix}.{_key(dear)}.{_key(cheap)}", f"{dear} vs {cheap}",
                    preset, (), (dear, *[cheap] * (seats - 1)), LADDER_SEED,
                    min(searched, default=scale.ladder_deals), 8, duplicate=True,
                    shard_hands=SEARCH_SHARD_HANDS if searched else DEFAULT_SHARD_HANDS,
                ))  # fmt: skip
    return out


def by_section(all_studies: Sequence[Study], section: str) -> list[Study]:
    return [s for s in all_studies if s.section == section]
