"""RuleSet: every switch of RULES.md Appendix B, as one frozen dataclass with named presets.

>>> find_rules("hunan").min_huxi
15
>>> find_rules("泸州").ruleset
'luzhou'
>>> r = find_rules("hunan").with_overrides(["min_huxi=10", "players=4"])
>>> (r.min_huxi, r.players)
(10, 4)
>>> RuleSet.from_json(r.to_json()) == r
True
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from engine.errors import InvalidRules, did_you_mean, quote

_CHOICES: dict[str, tuple[Any, ...]] = {
    "players": (3, 4),
    "ruleset": ("hunan", "luzhou"),
    "huayang": ("basic", "half", "full"),
    "tianhu_formula": ("double", "plain"),
    "luzhou_di_mode": ("a", "b"),
}


#: The largest ``huangzhuang_rotate``: streaks 0..255 fit ``hands.huang_streak`` (uint8).
MAX_HUANGZHUANG_ROTATE = 256


@dataclass(frozen=True, kw_only=True)
class RuleSet:
    """The rules of a table. Defaults are the Hunan/QQ 3-player 半花样 game (RULES.md App. B).

    * ``players``: 3, or 4 for the 坐醒 table (§13).
    * ``ruleset``: ``hunan`` or ``luzhou`` (§14: its 胡 table, 等 and score).
    * ``min_huxi``: the win threshold (15 Hunan, 10 Luzhou).
    * ``hu_on_discards``: a discard may be hu'd (§10.2; Luzhou).
    * ``huayang``: 花样 level ``basic`` / ``half`` / ``full`` (§11.3, C25).
    * ``tianhu_formula``: ``double`` = ⌊(2h−12)/3⌋+1, ``plain`` = ordinary 等 + 自摸 (§11.2).
    * ``one_five_ten``: 1-5-10 of one case counts as a 一句话 (off; K1 option).
    * ``chouhu``: the 臭胡 block of §6.4.
    * ``peng_compulsory``: a legal 碰 is executed automatically (§14, C35).
    * ``luzhou_di_mode``: Luzhou score mode ``b`` (红/乌 multipliers) or ``a`` (§14, C36).
    * ``huangzhuang_rotate``: consecutive 荒庄 after which the deal passes (§2, C16); 1..256,
      so that the streak before a hand (0 … rotate − 1) fits the log's uint8 ``huang_streak``.
    """

    players: int = 3
    ruleset: str = "hunan"
    min_huxi: int = 15
    hu_on_discards: bool = False
    huayang: str = "half"
    tianhu_formula: str = "double"
    one_five_ten: bool = False
    chouhu: bool = True
    peng_compulsory: bool = False
    luzhou_di_mode: str = "b"
    huangzhuang_rotate: int = 3

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            expected = bool if f.type in ("bool", bool) else int if f.type in ("int", int) else str
            if type(v) is not expected:
                raise InvalidRules(f"rule {f.name}={v!r}: expected {expected.__name__}")
            if f.name in _CHOICES and v not in _CHOICES[f.name]:
                allowed = ", ".join(str(c) for c in _CHOICES[f.name])
                raise InvalidRules(
                    f"rule {f.name}={quote(v)}: expected one of {allowed}"
                    f"{did_you_mean(v, [str(c) for c in _CHOICES[f.name]])}"
                )
        if not 1 <= self.min_huxi <= 99:
            raise InvalidRules(f"rule min_huxi={self.min_huxi}: expected 1..99")
        if not 1 <= self.huangzhuang_rotate <= MAX_HUANGZHUANG_ROTATE:
            raise InvalidRules(
                f"rule huangzhuang_rotate={self.huangzhuang_rotate}: expected"
                f" 1..{MAX_HUANGZHUANG_ROTATE} (the 荒庄 streak is logged in one byte)"
            )

    @property
    def luzhou(self) -> bool:
        return self.ruleset == "luzhou"

    @property
    def active_players(self) -> int:
        """Seats that receive cards: always 3 (the 4th seat sits out, §13)."""
        return 3

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        """Canonical JSON: sorted keys, no spaces. The fingerprint hashes exactly this."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RuleSet:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise InvalidRules(
                f"unknown rule switch {quote(unknown[0])}{did_you_mean(unknown[0], known)}"
            )
        return cls(**d)

    @classmethod
    def from_json(cls, text: str) -> RuleSet:
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise InvalidRules(f"rules JSON is malformed: {e.msg} at {e.pos}") from None
        if not isinstance(d, dict):
            raise InvalidRules("rules JSON must be an object")
        return cls.from_dict(d)

    def fingerprint(self) -> str:
        """A stable 16-hex-digit digest of the full rule set."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def with_overrides(self, assignments: Iterable[str]) -> RuleSet:
        """Apply ``key=value`` overrides (the CLI's ``--set``), values typed by the field."""
        types = {f.name: f.type for f in fields(self)}
        changes: dict[str, Any] = {}
        for a in assignments:
            key, sep, raw = a.partition("=")
            key = key.strip().replace("-", "_")
            raw = raw.strip()
            if not sep or not key:
                raise InvalidRules(f"malformed rule override {quote(a)}: expected key=value")
            if key not in types:
                raise InvalidRules(
                    f"unknown rule switch {quote(key)} in {quote(a)}{did_you_mean(key, types)}"
                )
            t = types[key]
            if t in ("bool", bool):
                low = raw.lower()
                if low in ("1", "true", "yes", "on"):
                    changes[key] = True
                elif low in ("0", "false", "no", "off"):
                    changes[key] = False
                else:
                    raise InvalidRules(f"rule override {quote(a)}: expected on/off")
            elif t in ("int", int):
                try:
                    changes[key] = int(raw)
                except ValueError:
                    raise InvalidRules(f"rule override {quote(a)}: expected an integer") from None
            else:
                changes[key] = raw
        return dataclasses.replace(self, **changes)

    def preset_name(self) -> str | None:
        """The preset this rule set equals, if any."""
        for name, r in PRESETS.items():
            if r == self:
                return name
        return None


PRESETS: dict[str, RuleSet] = {
    "hunan": RuleSet(),
    "hunan-basic": RuleSet(huayang="basic"),
    "hunan-full": RuleSet(huayang="full"),
    "hunan-4p": RuleSet(players=4),
    "luzhou": RuleSet(
        ruleset="luzhou",
        min_huxi=10,
        hu_on_discards=True,
        peng_compulsory=True,
        luzhou_di_mode="b",
    ),
}

ALIASES: dict[str, str] = {
    "default": "hunan",
    "qq": "hunan",
    "hunan-half": "hunan",
    "湖南": "hunan",
    "basic": "hunan-basic",
    "full": "hunan-full",
    "4p": "hunan-4p",
    "hunan4": "hunan-4p",
    "4-player": "hunan-4p",
    "dazi": "luzhou",
    "daer": "luzhou",
    "大贰": "luzhou",
    "泸州": "luzhou",
    "瀘州": "luzhou",
}


def find_rules(name: str) -> RuleSet:
    """A preset by name or alias (case-insensitive; ``_`` and ``-`` are the same)."""
    key = name.strip().lower().replace("_", "-")
    key = ALIASES.get(key, key)
    if key not in PRESETS:
        known = ", ".join(PRESETS)
        raise InvalidRules(
            f"unknown rule preset {quote(name)} (known: {known})"
            f"{did_you_mean(key, [*PRESETS, *ALIASES])}"
        )
    return PRESETS[key]
