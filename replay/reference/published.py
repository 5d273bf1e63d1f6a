"""The published reference figures, ``reference/reference.json`` beside docs/REFERENCE.md:
their format, its one writer (:func:`published`, called by ``paohuzi report``) and its one
reader (:func:`read_published`, for the dashboard's Reference page).

The document: ``{"format": "paohuzi-reference", "version": 1, "scale": NAME, "presets":
{PRESET: {"policy", "run", "hands", "figures": {NAME: FIGURE | null}}}}`` with the figures of
:data:`FIGURES`, each a rate ``{"kind": "rate", "k", "n", "value", "lo", "hi"}`` (Wilson) or a
mean ``{"kind": "mean", "n", "value", "lo", "hi"}`` (cluster-robust); values are fractions
(the dealer's advantage too: his win rate minus a non-dealer's, per hand), 胡息 and score
means over the winning hands, intervals 95 %. A figure without a value (no hand, fewer than
two clusters) is ``null``.

The reader is strict: a regular file of at most :data:`MAX_BYTES`, JSON, this format and
version, every field present with its type and no other; anything else is one line
(:class:`UnreadableReference`) naming the file and the first fault.

>>> from pathlib import Path
>>> read_published(Path("/nonexistent/reference.json"))
Traceback (most recent call last):
...
replay.reference.published.MissingReference: /nonexistent/reference.json: no such file (`make reference` or `paohuzi report` writes it)
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from engine.errors import PaohuziError
from replay.analysis.figures.results import Mean, Rate

if TYPE_CHECKING:
    from pydantic_core import SchemaValidator

    from replay.analysis.event_stats import EventStats
    from replay.analysis.stats import RunStats
    from replay.reference.plan import Scale, Study

#: Where the figures go, relative to the document's folder (``docs/reference/reference.json``
#: for docs/REFERENCE.md).
PUBLISHED = "reference/reference.json"
PUBLISHED_FORMAT = "paohuzi-reference"
PUBLISHED_VERSION = 1
#: The largest file read (five presets take about 10 KB).
MAX_BYTES = 1 << 20
#: The dashboard reads the file named here (``paohuzi dashboard --reference FILE``) instead
#: of the repository's published copy (:func:`default_path`).
REFERENCE_ENV = "PAOHUZI_REFERENCE"

#: The figures of a preset, in the order they are shown: the rates, then the means.
RATES = ("win", "huangzhuang", "dealer_win", "zimo")
MEANS = ("dealer_adv", "huxi", "score", "decisions_per_hand")
FIGURES = ("win", "huangzhuang", "dealer_win", "dealer_adv", "zimo", "huxi", "score",
           "decisions_per_hand")  # fmt: skip


class UnreadableReference(PaohuziError):
    """A reference file that cannot be read as :func:`published` writes it."""


class MissingReference(UnreadableReference):
    """No reference file where one was looked for (the full regeneration has not run)."""


def repository_root() -> Path:
    """The checkout this package runs from (``replay/reference/`` is two levels down); in an
    installed wheel, the folder that holds the packages."""
    return Path(__file__).resolve().parents[2]


#: The published copy this package ships: in the checkout a link to
#: ``docs/reference/reference.json`` (the one file ``paohuzi report`` writes), in a wheel that
#: file itself (the link's target is packed: ``pyproject.toml``'s package data).
SHIPPED = Path(__file__).resolve().parent / "reference.json"


def default_path() -> Path:
    """The published copy: ``docs/reference/reference.json`` of the checkout (through the
    package's link, :data:`SHIPPED`), or the copy an installed wheel holds."""
    return SHIPPED.resolve()


def location(environ: Mapping[str, str] = os.environ) -> Path:
    """The file the dashboard reads: ``$PAOHUZI_REFERENCE`` when set, else
    :func:`default_path`."""
    given = environ.get(REFERENCE_ENV, "").strip()
    return Path(given) if given else default_path()


# ---------------------------------------------------------------------------------------------
# The writer
# ---------------------------------------------------------------------------------------------


class _Recorded(Protocol):
    @property
    def run(self) -> str: ...

    @property
    def hands(self) -> int: ...


class StudyFigures(Protocol):
    """What :func:`published` reads of one study's figures
    (:class:`replay.reference.document.Gathered`; named here by its parts, since that module
    imports this one)."""

    @property
    def recorded(self) -> _Recorded: ...

    @property
    def stats(self) -> RunStats: ...

    @property
    def events(self) -> EventStats | None: ...

    @property
    def means(self) -> Mapping[str, Mean]: ...


def _value(kind: str, x: Rate | Mean | None) -> dict[str, Any] | None:
    """One figure as the file holds it; None (``null``) for one without a value or interval
    (JSON has no NaN)."""
    if x is None:
        return None
    if isinstance(x, Rate):
        if not x.n:
            return None
        return {"kind": "rate", "k": x.k, "n": x.n, "value": _g(x.p), "lo": _g(x.lo),
                "hi": _g(x.hi)}  # fmt: skip
    if any(math.isnan(v) or math.isinf(v) for v in (x.mean, x.lo, x.hi)):
        return None
    return {"kind": kind, "n": x.n, "value": _g(x.mean), "lo": _g(x.lo), "hi": _g(x.hi)}


def _g(x: float) -> float:
    """``x`` to 12 significant digits: the file's figures do not carry the last bits of a
    float sum, so they are the same bytes whatever order a reader summed in."""
    return float(f"{x:.12g}")


def published(scale: Scale, presets: Sequence[Study], got: Mapping[str, StudyFigures]) -> str:
    """The per-preset figures as JSON (``reference/reference.json``): per preset its policy,
    run, hands and each figure's value with its 95 % interval — a rate ``k`` of ``n``
    (Wilson), a mean of ``n`` (cluster-robust); the same keys as the statistics layer's
    figures: ``win``, ``huangzhuang``, ``dealer_win``, ``dealer_adv``, ``zimo``, ``huxi`` and
    ``score`` (of a win), ``decisions_per_hand``."""
    out: dict[str, Any] = {
        "format": PUBLISHED_FORMAT, "version": PUBLISHED_VERSION, "scale": scale.name,
    }  # fmt: skip
    table = {}
    for s in presets:
        g = got[s.key]
        m = g.means
        dw = m["dealer_win"]
        figures = {
            "win": _value("rate", g.stats.outcomes.get("win")),
            "huangzhuang": _value("rate", g.stats.outcomes.get("huangzhuang")),
            "dealer_win": _value("rate", Rate.of(round(dw.mean * dw.n), dw.n) if dw.n else None),
            "dealer_adv": _value("mean", m["dealer_adv"]),
            "zimo": _value("rate", g.stats.zimo),
            "huxi": _value("mean", m["huxi"]),
            "score": _value("mean", m["score"]),
            "decisions_per_hand": _value("mean", g.events.decisions_per_hand if g.events else None),
        }
        table[s.preset] = {
            "policy": s.policy, "run": g.recorded.run, "hands": g.recorded.hands,
            "figures": figures,
        }  # fmt: skip
    out["presets"] = table
    return json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


# ---------------------------------------------------------------------------------------------
# The reader
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PresetFigures:
    """One preset's published figures: the policy in every seat, the run and its hands, and
    each figure of :data:`FIGURES` (a :class:`Rate` for those of :data:`RATES`, a
    :class:`Mean` for the others; None when it has no value)."""

    policy: str
    run: str
    hands: int
    figures: Mapping[str, Rate | Mean | None]


@dataclass(frozen=True)
class Published:
    """The published reference: the scale its runs were played at, and each preset's
    figures."""

    scale: str
    presets: Mapping[str, PresetFigures]


@cache
def _validator() -> SchemaValidator:
    from pydantic_core import SchemaValidator
    from pydantic_core import core_schema as cs

    def obj(fields: dict[str, cs.CoreSchema]) -> cs.CoreSchema:
        return cs.typed_dict_schema(
            {k: cs.typed_dict_field(s, required=True) for k, s in fields.items()},
            extra_behavior="forbid",
            strict=True,
        )

    num = cs.float_schema(allow_inf_nan=False, strict=True)
    count = cs.int_schema(ge=0, le=2**53, strict=True)
    name = cs.str_schema(min_length=1, max_length=200, strict=True)
    common = {"n": count, "value": num, "lo": num, "hi": num}
    rate = obj({"kind": cs.literal_schema(["rate"]), "k": count, **common})
    mean = obj({"kind": cs.literal_schema(["mean"]), **common})
    figures = obj({f: cs.nullable_schema(rate if f in RATES else mean) for f in FIGURES})
    preset = obj({"policy": name, "run": name, "hands": count, "figures": figures})
    return SchemaValidator(
        obj(
            {
                "format": cs.str_schema(strict=True),
                "version": cs.int_schema(strict=True),
                "scale": name,
                "presets": cs.dict_schema(name, preset, max_length=100, strict=True),
            }
        )
    )


def _figure(d: Mapping[str, Any] | None) -> Rate | Mean | None:
    if d is None:
        return None
    if d["kind"] == "rate":
        return Rate(d["k"], d["n"], float(d["lo"]), float(d["hi"]))
    return Mean(float(d["value"]), float(d["lo"]), float(d["hi"]), d["n"])


def _problem(doc: Any) -> str | None:
    """The first fault of a parsed document (one line), or None."""
    from pydantic_core import ValidationError

    from replay.tune.checkpoint_file import first_fault

    try:
        _validator().validate_python(doc)
    except ValidationError as e:
        return first_fault(e)
    for preset, p in doc["presets"].items():
        for f in RATES:
            r = p["figures"][f]
            if r is not None and r["k"] > r["n"]:
                return f"field presets.{preset}.figures.{f}: k {r['k']} is more than n {r['n']}"
    return None


def read_published(path: Path) -> Published:
    """The reference figures in ``path``; :class:`MissingReference` when there is no such
    file, :class:`UnreadableReference` (one line naming the file and the first fault) when
    it is not a regular file of at most :data:`MAX_BYTES`, not JSON, not this format or
    version, or a field is missing, unknown or of the wrong type."""
    from replay.store.files import NOT_JSON, read_json_document

    again = "`make reference` or `paohuzi report` writes it"
    try:
        doc = read_json_document(path, MAX_BYTES, UnreadableReference)
    except FileNotFoundError:
        raise MissingReference(f"{path}: no such file ({again})") from None
    if doc is NOT_JSON:
        raise UnreadableReference(f"{path}: not JSON ({again})")
    if not isinstance(doc, dict) or doc.get("format") != PUBLISHED_FORMAT:
        raise UnreadableReference(f"{path}: not a {PUBLISHED_FORMAT} file ({again})")
    if doc.get("version") != PUBLISHED_VERSION:
        raise UnreadableReference(
            f"{path}: version {doc.get('version')!r} of the format, this reader takes"
            f" {PUBLISHED_VERSION} ({again})"
        )
    why = _problem(doc)
    if why:
        raise UnreadableReference(f"{path}: {why}")
    presets = {
        name: PresetFigures(
            p["policy"], p["run"], p["hands"], {f: _figure(p["figures"][f]) for f in FIGURES}
        )
        for name, p in doc["presets"].items()
    }
    return Published(doc["scale"], presets)
