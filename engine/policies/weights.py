"""The weights of ``greedy``, ``heuristic`` and ``learned`` as data: one table of named
parameters (``learned``'s coefficients are rows of it too, :mod:`engine.policies.learned`).

Every weight and threshold of the two policies is one :class:`Param` of :data:`PARAMS`
(name, default, allowed range, meaning; docs/POLICIES.md prints the table). The defaults are
the policies' tuned values: a policy built from :data:`DEFAULT_HEURISTIC` plays exactly as
``heuristic`` always has. The reference policies read their values from the table
(:meth:`engine.policies.greedy.GreedyPolicy.from_weights`), the compiled ones from a float64
array in the same order (:meth:`PolicyWeights.vector`, index constants derived from
:data:`INDEX` in ``engine.fast``), so any table plays the same bytes in both engines.

A weighted policy is written ``POLICY@WEIGHTS`` (:func:`parse_spec`): ``POLICY`` is
``greedy``, ``heuristic`` or ``learned``, and ``WEIGHTS`` is

* a **file** if it contains ``/`` or ends in ``.json`` (``heuristic@my.json``,
  ``heuristic@runs/w/tuned.json``; relative to the working directory), or
* the name of a **shipped set** otherwise (``heuristic@default``: ``engine/policies/
  weight_sets/default-heuristic.json``, see :func:`shipped_names`).

A weights file is a JSON object (:func:`parse_weights`)::

    {"policy": "heuristic", "about": "free text", "weights": {"margin": -25, ...}}

with every parameter of its policy, each a number in its range (a flag 0 or 1, an integer
parameter a whole number), no other parameter, no other key and no key twice. Anything else
is an :class:`~engine.errors.InvalidNotation` of one line naming the file and the parameter
(or key).

>>> INDEX["margin"], DEFAULT_HEURISTIC["danger_w"]
(0, 4.0)
>>> parse_spec("heuristic@default")
('heuristic', 'default', False)
>>> parse_spec("heuristic@tuned.json")
('heuristic', 'tuned.json', True)
>>> parse_spec("random@x")
Traceback (most recent call last):
...
engine.errors.InvalidNotation: policy 'random@x': only greedy, heuristic and learned take weights (greedy@WEIGHTS, heuristic@WEIGHTS, learned@WEIGHTS)
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import InvalidNotation, did_you_mean, quote

#: The policies that take a weights table (``search`` rollouts always use the defaults).
WEIGHTED = ("greedy", "heuristic", "learned")
#: Where the shipped sets live: ``NAME-POLICY.json`` (``default-heuristic.json``).
SHIPPED_DIR = Path(__file__).resolve().parent / "weight_sets"
#: The largest weights file read (a full table is about 1 KiB).
MAX_BYTES = 64 * 1024
#: The longest ``WEIGHTS`` part of a spec (it is recorded in every hand row).
MAX_SPEC = 180


class WeightsUnreadable(InvalidNotation):
    """A weights file that cannot be opened or read (missing, no permission, …): a resumed run
    then plays the table its manifest recorded."""


@dataclass(frozen=True)
class Param:
    """One weight or threshold: ``policy`` is the first policy that reads it (``greedy``'s
    are read by ``heuristic`` too); ``kind`` is ``float``, ``int`` (a whole number) or
    ``flag`` (0 or 1)."""

    name: str
    policy: str
    default: float
    low: float
    high: float
    kind: str
    meaning: str


def _p(name: str, policy: str, default: float, low: float, high: float, meaning: str,
       kind: str = "float") -> Param:  # fmt: skip
    return Param(name, policy, float(default), float(low), float(high), kind, meaning)


_G, _H, _L = "greedy", "heuristic", "learned"


#: The 名堂 features' names after ``d_`` / ``c_``: six bands of the red count, then 对对胡.
MINGTANG = ("wu", "dian", "dian_near", "hong_near", "hong", "hongwu", "duidui")


def _mingtang(prefix: str, what: str, when: str) -> tuple[tuple[str, float, str], ...]:
    """The 名堂 coefficients of a kind of decision (:data:`MINGTANG`; the features are
    engine.policies.learned._mingtang): the seat's red cards R (table melds and hand) in the
    bands the 名堂 of RULES.md §11.3 score, and 对对胡 within reach."""
    bands = ("R = 0 (乌胡)", "R = 1 (点胡)", "R = 2", "8 ≤ R ≤ 9", "10 ≤ R ≤ 12 (红胡)",
             "R ≥ 13 (红乌)")  # fmt: skip
    return (
        *((f"{prefix}_{n}", 0.0, f"{what}: × 1 when the seat's red cards {when} are {m}")
          for n, m in zip(MINGTANG, bands)),
        (f"{prefix}_duidui", 0.0,
         f"{what}: × 1 when, {when}, no 吃 is on the seat's table and at most one face in hand"
         " is single (对对胡 within reach)"),
    )  # fmt: skip


#: The bound of a learned coefficient.
COEF_LIMIT = 1e4

#: The one table. Its order is the order of the compiled policies' weight array; append new
#: parameters at the end of their policy's block (a recorded run records values by name).
PARAMS: tuple[Param, ...] = (
    # greedy (engine.policies.greedy)
    _p("margin", _G, -25.0, -1000, 1000, "a 碰/吃 is made when it scores above this"),
    _p("table", _G, 1.0, 0, 10, "a table group is worth table × 3 × full"),
    _p("hx", _G, 7.0, 0, 100, "weight of one 胡息 against structure"),
    _p("discard_term", _G, 1, 0, 1, "count the discard a take owes against it", "flag"),
    # card values (engine.policies.features.Scorer)
    _p("full", _G, 10.0, 0, 100, "a card of a complete 一句话 / 绞 in hand"),
    _p("pair", _G, 6.0, 0, 100, "a card of a pair"),
    _p("part", _G, 3.0, 0, 100, "a card of a partial shape with a live third card"),
    _p("out", _G, 0.45, 0, 10, "per live copy of the card that completes a partial shape"),
    _p("spill", _G, 0.12, 0, 1, "share of a card's other roles added to its best one"),
    _p("big", _G, 0.35, 0, 10, "base bonus of a big card (大字: more 胡息)"),
    _p("self", _G, 0.12, 0, 10, "base bonus per unseen copy of the card's own face"),
    _p("kan", _G, 12.0, 0, 100, "a card of a dealt 坎 (never discarded while others left)"),
    _p("pair_dead", _G, 0.4, 0, 1, "share of a pair's 偎 胡息 when its face has no live copy"),
    _p("part_hx", _G, 0.5, 0, 1, "share of a partial shape's 胡息 counted for its cards"),
    # heuristic (engine.policies.heuristic)
    _p("big_extra", _H, 0.5, 0, 10, "added to a big card's discard cost (出小不出大)"),
    _p("seen_w", _H, 0.25, 0, 10, "discard cost per unseen copy of its face (熟张 first)"),
    _p("danger_w", _H, 4.0, 0, 100, "cost of a discard an opponent can take, per threat"),
    _p("hu_risk", _H, 0.5, 0, 10, "where discards may be won: chance of his 胡 per threat"),
    _p("threat_floor", _H, 0.02, 0, 1, "an opponent's threat below this counts as none"),
    _p(
        "threat_hand",
        _H,
        21.0,
        1,
        100,
        "his threat falls to 0 as his hand grows to this many cards",
    ),
    _p("p_in_max", _H, 0.9, 0, 1, "cap of the chance that an unseen card is in his hand"),
    _p("stinky_w", _H, 1.2, 0, 10, "share of the shapes waiting on a face lost by passing"),
    _p("path_w", _H, 1.5, 0, 100, "per missing 胡息 of a take with no path to the threshold"),
    _p("path_slack", _H, 3, 0, 100, "check the path only while reach < min_huxi + this", "int"),
    _p(
        "ready_max_hand",
        _H,
        14,
        0,
        30,
        "look for waits (听牌) with at most this many cards in hand",
        "int",
    ),
    _p("ready_w", _H, 40.0, 0, 1000, "per live winning copy of a wait"),
    _p("ready_hx", _H, 0.1, 0, 1, "a wait's copy counts 1 + this per 胡息 above min_huxi"),
    _p("ready_takes", _H, 1, 0, 1, "value the waits a take leaves and a pass keeps", "flag"),
    # learned (engine.policies.learned): an option's score is Σ coefficient × feature; the
    # defaults give the heuristic's own sums (its default weights), the start of distillation
    *(
        _p(name, _L, default, -COEF_LIMIT, COEF_LIMIT, meaning)
        for name, default, meaning in (
            ("d_value", -1.0, "discard: × the card's value in hand (greedy's card value)"),
            ("d_unseen", -0.25, "discard: × the unseen copies of its face"),
            ("d_big", -0.5, "discard: × 1 for a big card"),
            ("d_danger", -4.0, "discard: × the opponents' threat-weighted chance to take it"),
            ("d_ready", 40.0, "discard: × the live winning copies it leaves (听牌)"),
            ("d_value_stock", 0.0, "discard: × value × the share of the stock left"),
            ("d_unseen_stock", 0.0, "discard: × unseen copies × the share of the stock left"),
            ("d_pair", 0.0, "discard: × 1 when it breaks a pair"),
            ("d_loose", 0.0, "discard: × 1 when its face is in no complete group"),
            ("d_dead", 0.0, "discard: × 1 when no copy of its face is unseen"),
            ("d_banned", 0.0, "discard: × 1 when the seat may no longer 吃/碰 its face"),
            ("d_feed", 0.0, "discard: × the opponents' summed chance to 碰/吃 it"),
            ("d_reach_loss", 0.0, "discard: × the 胡息 the hand may count on that it loses"),
            ("d_path", 0.0, "discard: × the 胡息 it puts out of reach of the threshold"),
            *_mingtang("d", "discard", "after it"),
            ("c_pass", -25.0, "claim: × 1 for PASS"),
            ("c_stinky", -1.2, "claim, PASS: × the shapes waiting on a face it makes stinky"),
            ("c_pass_ready", 40.0, "claim, PASS: × the live winning copies the hand keeps"),
            ("c_groups", 30.0, "claim, a take: × the groups it lays on the table"),
            ("c_hx", 7.0, "claim, a take: × the 胡息 of those groups"),
            ("c_structure", 1.0, "claim, a take: × the change of the hand's card values"),
            ("c_owed", -1.0, "claim, a take: × the value of the discard it owes"),
            ("c_path", -1.5, "claim, a take: × the 胡息 it puts out of reach"),
            ("c_take_ready", 40.0, "claim, a take: × the live winning copies it leaves"),
            ("c_pass_stock", 0.0, "claim, PASS: × the share of the stock left"),
            ("c_hx_stock", 0.0, "claim, a take: × its 胡息 × the share of the stock left"),
            ("c_peng", 0.0, "claim, a take: × 1 for a 碰"),
            ("c_structure_stock", 0.0, "claim, a take: × structure × the share of the stock left"),
            *_mingtang("c", "claim", "after the option"),
        )
    ),
)

#: Coefficients added after learned tables were recorded (the 名堂 features): a table that
#: lacks one plays as it did, as if it were 0, so reading allows it missing and a table
#: writes it only when it is not 0 — older files, manifests and run digests stay valid.
LATE = frozenset(p.name for p in PARAMS if p.policy == _L and p.name[2:] in MINGTANG)

#: A parameter's position in :data:`PARAMS` (and in the compiled weight array).
INDEX: dict[str, int] = {p.name: i for i, p in enumerate(PARAMS)}
N_PARAMS = len(PARAMS)
BY_NAME: dict[str, Param] = {p.name: p for p in PARAMS}


#: The heuristic's weights that only scale one of its terms: the learned policy reads the
#: term as a feature and weighs it by its own coefficient instead (``c_pass``, ``d_unseen`` …).
LEARNED_SKIPS = frozenset(
    ("margin", "table", "big_extra", "seen_w", "danger_w", "stinky_w", "path_w", "ready_w")
)


def policy_params(policy: str) -> tuple[Param, ...]:
    """The parameters ``policy`` reads (``heuristic``: greedy's and its own; ``learned``:
    those that shape its features, and its coefficients)."""
    if policy == _G:
        return tuple(p for p in PARAMS if p.policy == _G)
    if policy == _H:
        return tuple(p for p in PARAMS if p.policy != _L)
    if policy == _L:
        return tuple(p for p in PARAMS if p.name not in LEARNED_SKIPS)
    raise InvalidNotation(f"policy {policy!r} takes no weights (only {', '.join(WEIGHTED)})")


@dataclass(frozen=True)
class PolicyWeights:
    """A full table for ``policy``: ``values`` in :data:`PARAMS` order (a greedy table holds
    the heuristic parameters at their defaults; they are not its own and not recorded)."""

    policy: str
    values: tuple[float, ...]

    def __getitem__(self, name: str) -> float:
        return self.values[INDEX[name]]

    def as_dict(self) -> dict[str, float]:
        """The policy's own parameters, name → value (what a manifest records; a
        :data:`LATE` coefficient only when it is not 0)."""
        return {
            p.name: v
            for p in policy_params(self.policy)
            if (v := self.values[INDEX[p.name]]) or p.name not in LATE
        }

    def vector(self) -> list[float]:
        """Every value in :data:`PARAMS` order (the compiled policies' array)."""
        return list(self.values)

    def typed(self) -> dict[str, float | int | bool]:
        """The policy's own parameters as the reference policy holds them (a flag a bool, an
        integer parameter an int)."""
        out: dict[str, float | int | bool] = {}
        for name, v in self.as_dict().items():
            kind = BY_NAME[name].kind
            out[name] = bool(v) if kind == "flag" else int(v) if kind == "int" else v
        return out


DEFAULT_VALUES = tuple(p.default for p in PARAMS)
DEFAULT_GREEDY = PolicyWeights(_G, DEFAULT_VALUES)
DEFAULT_HEURISTIC = PolicyWeights(_H, DEFAULT_VALUES)
DEFAULT_LEARNED = PolicyWeights(_L, DEFAULT_VALUES)


def defaults(policy: str) -> PolicyWeights:
    """The policy's built-in table (its class defaults)."""
    policy_params(policy)
    return {_G: DEFAULT_GREEDY, _H: DEFAULT_HEURISTIC}.get(policy, DEFAULT_LEARNED)


# ---------------------------------------------------------------------------------------------
# Specs
# ---------------------------------------------------------------------------------------------

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


def is_weighted_spec(spec: str) -> bool:
    """Whether ``spec`` is ``POLICY@WEIGHTS`` for a weighted policy (``search@…`` is not)."""
    base, sep, _ = spec.strip().partition("@")
    return bool(sep) and base.strip().lower() in WEIGHTED


def parse_spec(spec: str) -> tuple[str, str, bool]:
    """``(policy, weights, is_file)`` of ``POLICY@WEIGHTS``: a file if ``WEIGHTS`` contains
    ``/`` or ends in ``.json``, else a shipped set's name; :class:`InvalidNotation` with one
    line for anything else. A path keeps its case; a name is lower-cased."""
    text = spec.strip()
    base, sep, rest = text.partition("@")
    base = base.strip().lower()
    if not sep or base not in WEIGHTED:
        raise InvalidNotation(
            f"policy {spec[:60]!r}: only {', '.join(WEIGHTED[:-1])} and {WEIGHTED[-1]} take weights"
            f" ({', '.join(p + '@WEIGHTS' for p in WEIGHTED)})"
            f"{did_you_mean(base, WEIGHTED) if sep else ''}"
        )
    rest = rest.strip()
    if not rest:
        raise InvalidNotation(f"policy {spec[:60]!r}: name a weights file or set after '@'")
    if len(rest) > MAX_SPEC:
        raise InvalidNotation(
            f"policy {spec[:60]!r}…: the weights path is longer than {MAX_SPEC} characters"
        )
    if "/" in rest or rest.lower().endswith(".json"):
        if any(c in rest for c in ",+\n\r\t\x00"):
            raise InvalidNotation(
                f"policy {spec[:60]!r}: a weights path may not contain ',', '+' or control"
                " characters"
            )
        return base, rest, True
    name = rest.lower()
    if _NAME.fullmatch(name) is None:
        raise InvalidNotation(
            f"policy {spec[:60]!r}: {rest!r} is no weights set name (letters, digits, '-', '_';"
            " a file: a path with '/' or ending in .json)"
        )
    return base, name, False


def canonical(spec: str) -> str:
    """The spec as runs record it: the policy lower-cased, ``@``, the set name (lower-cased)
    or the path as written."""
    base, weights, _ = parse_spec(spec)
    return f"{base}@{weights}"


def shipped_names(policy: str) -> list[str]:
    """The names of the shipped sets for ``policy`` (files ``NAME-POLICY.json``)."""
    suffix = f"-{policy}.json"
    if not SHIPPED_DIR.is_dir():
        return []
    return sorted(p.name[: -len(suffix)] for p in SHIPPED_DIR.iterdir() if p.name.endswith(suffix))


def shipped_path(policy: str, name: str) -> Path:
    """The file of shipped set ``name`` for ``policy``; InvalidNotation if there is none."""
    path = SHIPPED_DIR / f"{name}-{policy}.json"
    if not path.is_file():
        have = ", ".join(shipped_names(policy)) or "none"
        raise InvalidNotation(
            f"policy '{policy}@{name}': no shipped weights set {name!r} for {policy}"
            f" (shipped: {have}; a file: a path with '/' or ending in .json)"
            f"{did_you_mean(name, shipped_names(policy))}"
        )
    return path


def load_spec(spec: str) -> PolicyWeights:
    """The table a ``POLICY@WEIGHTS`` spec names, read from its file or shipped set now."""
    policy, weights, is_file = parse_spec(spec)
    path = Path(weights) if is_file else shipped_path(policy, weights)
    return read_weights(path, policy, shown=weights if is_file else str(path.name))


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def read_weights(path: Path | str, policy: str, shown: str | None = None) -> PolicyWeights:
    """The table in the weights file ``path`` for ``policy``: a regular file of at most
    :data:`MAX_BYTES` in UTF-8 JSON, checked by :func:`parse_weights`; every problem one
    InvalidNotation line starting ``weights file 'PATH'``."""
    where = f"weights file {shown or str(path)!r}"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise WeightsUnreadable(f"{where}: cannot read it ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InvalidNotation(f"{where}: is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise InvalidNotation(f"{where}: is not a regular file")
        if st.st_size > MAX_BYTES:
            raise InvalidNotation(f"{where}: {st.st_size:,} bytes, more than {MAX_BYTES:,}")
        data = os.read(fd, MAX_BYTES + 1)
    except OSError as e:
        raise WeightsUnreadable(f"{where}: cannot read it ({e.strerror or e})") from None
    finally:
        os.close(fd)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidNotation(f"{where}: not UTF-8 text") from None
    try:
        doc = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_once(where))
    except InvalidNotation:
        raise  # a key given twice
    except ValueError as e:
        raise InvalidNotation(f"{where}: not JSON ({str(e).splitlines()[0]})") from None
    return parse_weights(doc, policy, where)


def _no_constant(token: str) -> None:
    raise ValueError(f"{token} is not a number JSON allows")


def _once(where: str) -> Any:
    """``object_pairs_hook`` of a weights file: an object, or one InvalidNotation line
    naming a key it gives twice (``json`` would keep the last value without a word)."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise InvalidNotation(f"{where}: key {quote(key)} is given twice")
            out[key] = value
        return out

    return hook


def parse_weights(doc: Any, policy: str, where: str = "weights") -> PolicyWeights:
    """The table of a parsed weights document for ``policy`` (see the module); one
    InvalidNotation line ``WHERE: …`` naming the key or parameter at fault otherwise."""
    if not isinstance(doc, dict):
        raise InvalidNotation(f"{where}: expected a JSON object, got {_shown(doc)}")
    for key in doc:
        if key not in ("policy", "about", "weights"):
            raise InvalidNotation(
                f"{where}: unknown key {key!r} (the keys: policy, about, weights)"
            )
    if doc.get("policy") != policy:
        raise InvalidNotation(
            f"{where}: field policy: expected {policy!r}, got {_shown(doc.get('policy'))}"
        )
    if "about" in doc and not isinstance(doc["about"], str):
        raise InvalidNotation(
            f"{where}: field about: expected a string, got {_shown(doc['about'])}"
        )
    if "weights" not in doc:
        raise InvalidNotation(f"{where}: field weights is missing")
    return weights_from_mapping(doc["weights"], policy, where)


def weights_from_mapping(values: Any, policy: str, where: str = "weights") -> PolicyWeights:
    """The table of ``{name: number}`` holding exactly the parameters of ``policy`` (also
    how a manifest's recorded weights are read back)."""
    own = policy_params(policy)
    if not isinstance(values, Mapping):
        raise InvalidNotation(f"{where}: field weights: expected an object, got {_shown(values)}")
    names = {p.name for p in own}
    for key in values:
        if key not in names:
            extra = ""
            if key in LEARNED_SKIPS and policy == _L:
                extra = " (a heuristic weight the learned policy replaces by a coefficient)"
            elif key in BY_NAME:
                extra = f" (a {BY_NAME[key].policy} parameter)"
            raise InvalidNotation(f"{where}: unknown parameter {key!r} for {policy}{extra}")
    out = list(DEFAULT_VALUES)
    for p in own:
        if p.name not in values:
            if p.name in LATE:
                continue  # a table older than the coefficient: 0, as it played
            raise InvalidNotation(f"{where}: parameter {p.name!r} is missing")
        out[INDEX[p.name]] = check_value(p, values[p.name], where)
    return PolicyWeights(policy, tuple(out))


def check_value(p: Param, v: Any, where: str = "weights") -> float:
    """``v`` as the float of parameter ``p``, or one InvalidNotation line naming it."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise InvalidNotation(f"{where}: parameter {p.name!r}: expected a number, got {_shown(v)}")
    x = float(v)
    if not math.isfinite(x) or not p.low <= x <= p.high:
        raise InvalidNotation(
            f"{where}: parameter {p.name!r}: {_shown(v)} is out of range {_num(p.low)} …"
            f" {_num(p.high)}"
        )
    if p.kind != "float" and x != int(x):
        what = "0 or 1" if p.kind == "flag" else "a whole number"
        raise InvalidNotation(f"{where}: parameter {p.name!r}: expected {what}, got {_shown(v)}")
    return x + 0.0  # -0.0 → 0.0: one table, one set of bytes


def first_difference(a: PolicyWeights, b: PolicyWeights) -> str | None:
    """``'NAME A, not B'`` for the first parameter (in table order) where two tables differ."""
    for p in PARAMS:
        x, y = a[p.name], b[p.name]
        if x != y:
            return f"{p.name} {_num(x)}, not {_num(y)}"
    return None if a.policy == b.policy else f"policy {a.policy}, not {b.policy}"


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


def _shown(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else f"{text[:37]}…"


def weights_document(w: PolicyWeights, about: str = "") -> dict[str, Any]:
    """The JSON document of a table (what :func:`read_weights` reads back)."""
    doc: dict[str, Any] = {"policy": w.policy}
    if about:
        doc["about"] = about
    doc["weights"] = {k: (int(v) if BY_NAME[k].kind != "float" else v)
                      for k, v in w.as_dict().items()}  # fmt: skip
    return doc


def table_markdown() -> str:
    """The parameter table as docs/POLICIES.md prints it (a test holds the two equal)."""
    rows = [
        "| parameter | policy | default | range | kind | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for p in PARAMS:
        rows.append(
            f"| `{p.name}` | {p.policy} | {_num(p.default)} | {_num(p.low)} … {_num(p.high)} |"
            f" {p.kind} | {p.meaning} |"
        )
    return "\n".join(rows) + "\n"
