"""The typed schema of a run's manifest (docs/LOG_FORMAT.md §2), one ``pydantic_core``
validator (pydantic's own import would cost every command 0.15 s): every field a reader uses,
checked strictly — an integer is an integer (no ``"200"``, no ``200.5``, no ``true``), a flag
is ``true`` or ``false`` (no ``"false"``), counts are ≥ 0, a seed fits 64 bits — so that a
damaged or hand-edited manifest is refused with one line naming the field, and no reader ever
meets a wrong type. Fields the readers do not use (``codes``, ``tables``, ``seeds``, later
additions) are kept as they are.

>>> check_manifest({"format": "paohuzi-run", "schema_version": 1, "run": "r",
...                 "status": "complete", "rules": {}, "shards": [{"index": 0, "first_hand": 0,
...                 "hands": -5, "events": 0, "files": {}}]})
Traceback (most recent call last):
...
replay.store.manifest_schema.ManifestInvalid: manifest field shards[0].hands: expected an integer ≥ 0, got -5
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from engine.errors import CorruptLog, PaohuziError
from engine.rules import RuleSet
from replay.lazy import lazy_attributes

#: The version of a stored review file this code writes (replay.store.reviews; LOG_FORMAT
#: §11); a manifest may list files of every version up to it.
REVIEW_VERSION = 2

if TYPE_CHECKING:
    from pydantic_core import SchemaValidator, ValidationError
    from pydantic_core import core_schema as cs


class ManifestInvalid(CorruptLog):
    """A manifest whose fields do not have the documented types."""


def _count(limit: int, low: int = 0) -> cs.CoreSchema:
    from pydantic_core import core_schema as cs

    return cs.int_schema(ge=low, le=limit, strict=True)


def _obj(fields: dict[str, tuple[cs.CoreSchema, bool]]) -> cs.CoreSchema:
    """A JSON object with these ``{name: (schema, required)}`` fields (others kept as
    they are)."""
    from pydantic_core import core_schema as cs

    return cs.typed_dict_schema(
        {k: cs.typed_dict_field(v, required=req) for k, (v, req) in fields.items()},
        extra_behavior="allow",
        strict=True,
    )


def _opt(schema: cs.CoreSchema) -> tuple[cs.CoreSchema, bool]:
    """An optional field that may be null."""
    from pydantic_core import core_schema as cs

    return cs.nullable_schema(schema), False


#: The schema's public parts, built on first use (:func:`_parts`).
_PUBLIC = ("COUNT", "HANDS", "POSITIVE", "SEED", "TEXT", "MANIFEST_SCHEMA")

if TYPE_CHECKING:
    COUNT: cs.CoreSchema
    HANDS: cs.CoreSchema
    POSITIVE: cs.CoreSchema
    SEED: cs.CoreSchema
    TEXT: cs.CoreSchema
    MANIFEST_SCHEMA: cs.CoreSchema
else:  # built on first use: a reader that finds its scan remembered reads no manifest
    __getattr__ = lazy_attributes(
        __name__, {name: (lambda name=name: _parts()[name]) for name in _PUBLIC}
    )


@functools.cache
def _parts() -> dict[str, cs.CoreSchema]:
    """Every named part of the schema (one object each for every caller)."""
    from pydantic_core import core_schema as cs

    from engine.policies import weights as _W

    # A count of rows, bytes or events (2⁴⁵: sums over any manifest's shards fit 63 bits).
    COUNT = _count(1 << 45)
    # A count of hands or sessions, a hand id (``hands.hand_id`` is a uint32).
    HANDS = _count(1 << 32)
    POSITIVE = _count(1 << 32, 1)
    SEED = _count((1 << 64) - 1)
    TEXT = cs.str_schema(strict=True)

    # What every listed file has: its path in the run folder, rows, bytes and SHA-256.
    _FILE_FIELDS: dict[str, tuple[cs.CoreSchema, bool]] = {
        "path": (cs.str_schema(min_length=1, max_length=4096, strict=True), True),
        "rows": (COUNT, True),
        "bytes": (COUNT, True),
        "sha256": (cs.str_schema(pattern=r"^[0-9a-f]{64}$", strict=True), True),
    }
    _FILE = _obj(_FILE_FIELDS)
    _SHARD = _obj(
        {
            "index": (HANDS, True),
            "first_session": _opt(HANDS),
            "sessions": (HANDS, False),
            "first_hand": (HANDS, True),
            "hands": (HANDS, True),
            "events": (COUNT, True),
            "engine": _opt(TEXT),
            "files": (
                _obj(
                    {
                        "hands": (_FILE, True),
                        "events": (_FILE, True),
                        "summary": (_FILE, False),
                        "facts": (_FILE, False),
                        "imported": (_FILE, False),  # a run of imported hands: the provenance
                    }
                ),
                True,
            ),
        }
    )
    # A weighted policy's recorded table (``params.weights[SPEC]``): each parameter of
    # engine.policies.weights.PARAMS a finite number in its range, no other key (which
    # parameters a spec's policy must list is checked after, :func:`_weights`).
    _TABLE = cs.typed_dict_schema(
        {
            p.name: cs.typed_dict_field(
                cs.float_schema(ge=p.low, le=p.high, allow_inf_nan=False, strict=True),
                required=False,
            )
            for p in _W.PARAMS
        },
        extra_behavior="forbid",
        strict=True,
    )
    _WEIGHTS = cs.dict_schema(
        cs.str_schema(min_length=3, max_length=200, strict=True), _TABLE, max_length=4, strict=True
    )
    _NAMES = cs.list_schema(cs.str_schema(max_length=200, strict=True), max_length=4, strict=True)
    _PARAMS = _obj(
        {
            "seed": _opt(SEED),
            "deals": (HANDS, False),
            "hands_total": (HANDS, False),
            "session_length": _opt(POSITIVE),
            "duplicate": (cs.bool_schema(strict=True), False),
            "rotations": (_count(4, 1), False),
            "policies": (_NAMES, False),
            "policies_text": _opt(TEXT),
            "seat_policies": (cs.list_schema(_NAMES, max_length=4, strict=True), False),
            "seat_policies_overflow": _opt(cs.bool_schema(strict=True)),
            "shard_hands": _opt(POSITIVE),
            "sessions_per_shard": _opt(POSITIVE),
            "n_sessions": _opt(HANDS),
            "n_shards": _opt(HANDS),
            "weights": (_WEIGHTS, False),
        }
    )
    # A stored review's file (replay.store.reviews, docs/LOG_FORMAT.md §11): a shard file's
    # fields, the review's key, and the (hand, seat) pairs it holds as [first, last, seat mask].
    _REVIEW = _obj(
        {
            **_FILE_FIELDS,
            "version": (cs.literal_schema(list(range(1, REVIEW_VERSION + 1))), True),
            "rollouts": (_count(1 << 20, 1), True),
            "rollout_policy": (cs.str_schema(min_length=1, max_length=40, strict=True), True),
            "seed": (SEED, True),
            "hands": (
                cs.list_schema(
                    cs.list_schema(HANDS, min_length=3, max_length=3, strict=True), strict=True
                ),
                True,
            ),
        }
    )
    # A played hand's duplicate comparison (replay.store.comparisons, LOG_FORMAT §15): the
    # person's seat and each bot's score in it on the same deal.
    _SCORE = _obj(
        {
            "policy": (cs.str_schema(min_length=1, max_length=1000, strict=True), True),
            "score": (cs.int_schema(strict=True, ge=-(1 << 31), le=1 << 31), True),
        }
    )
    _COMPARISON = _obj(
        {
            "hand": (HANDS, True),
            "seat": (_count(3), True),
            "scores": (cs.list_schema(_SCORE, max_length=16, strict=True), True),
        }
    )
    _PROGRESS = _obj({k: (COUNT, False) for k in ("shards", "hands", "events", "bytes")})
    _ANY_OBJECT = cs.dict_schema(TEXT, cs.any_schema(), strict=True)

    # The whole document.
    MANIFEST_SCHEMA = _obj(
        {
            "format": (cs.literal_schema(["paohuzi-run"]), True),
            "schema_version": (cs.int_schema(strict=True), True),
            "run": (cs.str_schema(min_length=1, max_length=255, strict=True), True),
            "status": (cs.literal_schema(["running", "interrupted", "failed", "complete"]), True),
            "created": (TEXT, False),
            "updated": (TEXT, False),
            "code": _opt(_obj({"version": _opt(TEXT), "git": _opt(TEXT)})),
            "command": (cs.list_schema(TEXT, strict=True), False),
            "writer": _opt(_obj({"host": _opt(TEXT), "user": _opt(TEXT), "pid": _opt(COUNT)})),
            "identity": _opt(_ANY_OBJECT),
            "params": (_PARAMS, False),
            "rules": (_ANY_OBJECT, True),
            "rules_preset": _opt(TEXT),
            "rules_fingerprint": _opt(TEXT),
            "shards": (cs.list_schema(_SHARD, strict=True), True),
            "progress": (_PROGRESS, False),
            "error": _opt(TEXT),
            "reviews": (cs.list_schema(_REVIEW, max_length=1 << 20, strict=True), False),
            "comparisons": (cs.list_schema(_COMPARISON, max_length=1 << 20, strict=True), False),
            # derived data, checked by the scan (replay.store.rollup): a bad one never costs
            # the run, so it is not refused here
            "rollup": (cs.any_schema(), False),
        }
    )
    return {
        "COUNT": COUNT,
        "HANDS": HANDS,
        "POSITIVE": POSITIVE,
        "SEED": SEED,
        "TEXT": TEXT,
        "MANIFEST_SCHEMA": MANIFEST_SCHEMA,
    }


@functools.cache
def _validator() -> SchemaValidator:
    from pydantic_core import SchemaValidator

    return SchemaValidator(_parts()["MANIFEST_SCHEMA"])


def _rules_and_seats(doc: dict[str, Any]) -> None:
    """What one field's type cannot say: the rules make a rule set, and the policies list
    as many seats as its table has."""
    try:
        players = RuleSet.from_dict(doc["rules"]).players
    except PaohuziError as e:
        raise ManifestInvalid(f"manifest field rules: {e}") from None
    params: dict[str, Any] = dict(doc.get("params") or {})
    n = len(params.get("policies") or ())
    imported = bool((doc.get("identity") or {}).get("imported"))
    if (n or not imported) and n != players:  # a run of imported hands lists none
        raise ManifestInvalid(
            f"manifest field params.policies: {n} seat(s) for a {players}-player table"
        )
    _weights(params)
    for r, seats in enumerate(params.get("seat_policies") or ()):
        if len(seats) != players:
            raise ManifestInvalid(
                f"manifest field params.seat_policies[{r}]: {len(seats)} seat(s) for a"
                f" {players}-player table"
            )


def _weights(params: dict[str, Any]) -> None:
    """``params.weights``: one table per weighted policy of ``params.policies`` (a seat's or a
    search's rollout policy; by canonical spec), listing exactly its policy's parameters,
    whole numbers where the table says."""
    from engine.policies import table_spec
    from engine.policies import weights as _W

    recorded = params.get("weights") or {}
    specs = set()
    for name in params.get("policies") or ():
        try:
            table = table_spec(name)
            if table is not None:
                specs.add(_W.canonical(table))
        except PaohuziError as e:
            raise ManifestInvalid(f"manifest field params.policies: {e}") from None
    for key, values in recorded.items():
        where = f"manifest field params.weights[{key!r}]"
        if key not in specs:
            raise ManifestInvalid(f"{where}: no weighted policy of params.policies is {key!r}")
        try:
            _W.weights_from_mapping(values, _W.parse_spec(key)[0], where)
        except PaohuziError as e:
            raise ManifestInvalid(str(e)) from None
    missing = sorted(specs - set(recorded))
    if missing:
        raise ManifestInvalid(f"manifest field params.weights[{missing[0]!r}] is missing")


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part not in ("function-after",):
            out += f".{part}" if out else str(part)
    return out


def shown_value(v: Any) -> str:
    """A value as an error line quotes it: its repr, cut at 40 characters."""
    text = repr(v)
    return text if len(text) <= 40 else f"{text[:37]}…"


def expected_text(err: dict[str, Any]) -> str:
    """What a ``pydantic_core`` error says was expected, in the words of our messages (the
    replay file's reader, :mod:`replay.replayer.replay_schema`, speaks the same)."""
    kind, ctx = err["type"], err.get("ctx") or {}
    number = "an integer"
    if "ge" in ctx and "le" in ctx:
        return f"expected {number} in {ctx['ge']} … {ctx['le']}"
    return {
        "int_type": "expected an integer",
        "float_type": "expected a number",
        "finite_number": "expected a finite number",
        "extra_forbidden": "unknown parameter",
        "greater_than_equal": f"expected an integer ≥ {ctx.get('ge')}",
        "less_than_equal": f"expected an integer ≤ {ctx.get('le')}",
        "bool_type": "expected true or false",
        "string_type": "expected a string",
        "string_too_short": "expected a non-empty string",
        "string_too_long": f"expected at most {ctx.get('max_length')} characters",
        "string_pattern_mismatch": "expected 64 lowercase hex digits",
        "list_type": "expected a list",
        "too_long": f"expected at most {ctx.get('max_length')} items",
        "too_short": f"expected at least {ctx.get('min_length')} items",
        "dict_type": "expected an object",
        "model_type": "expected an object",
        "literal_error": f"expected {ctx.get('expected')}",
        "missing": "missing",
    }.get(kind, str(err.get("msg", kind)).lower())


def describe(e: ValidationError) -> str:
    """The first error of ``e`` as ``manifest field LOC: expected …, got …``."""
    err = e.errors(include_url=False)[0]
    where = _where(tuple(err["loc"]))
    expected = expected_text(dict(err))
    if where.startswith("params.weights"):  # the weights are numbers, not integers
        expected = expected.replace("an integer", "a number")
    if err["type"] == "missing":
        return f"manifest field {where} is missing"
    return f"manifest field {where}: {expected}, got {shown_value(err.get('input'))}"


def check_manifest(doc: Any) -> dict[str, Any]:
    """``doc`` (parsed JSON) checked against the schema: the same document (its keys in
    their order);
    :class:`ManifestInvalid` naming the first field at fault otherwise."""
    from pydantic_core import ValidationError

    try:
        _validator().validate_python(doc)  # strict: nothing is converted, so ``doc`` is it
    except ValidationError as e:
        raise ManifestInvalid(describe(e)) from None
    _rules_and_seats(doc)
    return dict(doc)
