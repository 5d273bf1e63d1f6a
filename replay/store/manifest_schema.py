"""The typed schema of a run's manifest (docs/LOG_FORMAT.md §2): every field a reader uses,
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

from typing import Annotated, Any, Literal, NotRequired

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from engine.errors import CorruptLog, PaohuziError
from engine.rules import RuleSet

Count = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(ge=1)]
Seed = Annotated[int, Field(ge=0, le=(1 << 64) - 1)]
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class ManifestInvalid(CorruptLog):
    """A manifest whose fields do not have the documented types."""


_STRICT = ConfigDict(strict=True, extra="allow")


class FileEntry(TypedDict):
    """One shard file: where, how many rows and bytes, its SHA-256."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    path: Annotated[str, Field(min_length=1, max_length=4096)]
    rows: Count
    bytes: Count
    sha256: Sha256


class ShardFiles(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    hands: FileEntry
    events: FileEntry
    summary: NotRequired[FileEntry]


class Shard(TypedDict):
    """A finished shard of the run."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    index: Count
    first_session: NotRequired[Count | None]
    sessions: NotRequired[Count]
    first_hand: Count
    hands: Count
    events: Count
    engine: NotRequired[str | None]
    files: ShardFiles


class Params(TypedDict):
    """How the run was played (an imported run's are empty)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    seed: NotRequired[Seed | None]
    deals: NotRequired[Count]
    hands_total: NotRequired[Count]
    session_length: NotRequired[Positive | None]
    duplicate: NotRequired[bool]
    rotations: NotRequired[Annotated[int, Field(ge=1, le=4)]]
    policies: NotRequired[
        Annotated[list[Annotated[str, Field(max_length=200)]], Field(max_length=4)]
    ]
    policies_text: NotRequired[str | None]
    seat_policies: NotRequired[list[list[str]]]
    shard_hands: NotRequired[Positive | None]
    sessions_per_shard: NotRequired[Positive | None]
    n_sessions: NotRequired[Count | None]
    n_shards: NotRequired[Count | None]


class Progress(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    shards: NotRequired[Count]
    hands: NotRequired[Count]
    events: NotRequired[Count]
    bytes: NotRequired[Count]


class Code(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    version: NotRequired[str | None]
    git: NotRequired[str | None]


class Writer(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    host: NotRequired[str | None]
    user: NotRequired[str | None]
    pid: NotRequired[Count | None]


class ManifestSchema(TypedDict):
    """The whole document (validated, it is the same ``dict``, keys in their order)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    format: Literal["paohuzi-run"]
    schema_version: int
    run: Annotated[str, Field(min_length=1, max_length=255)]
    status: Literal["running", "interrupted", "failed", "complete"]
    created: NotRequired[str]
    updated: NotRequired[str]
    code: NotRequired[Code | None]
    command: NotRequired[list[str]]
    writer: NotRequired[Writer | None]
    identity: NotRequired[dict[str, Any] | None]
    params: NotRequired[Params]
    rules: dict[str, Any]
    rules_preset: NotRequired[str | None]
    rules_fingerprint: NotRequired[str | None]
    shards: list[Shard]
    progress: NotRequired[Progress]
    error: NotRequired[str | None]


_ADAPTER: TypeAdapter[ManifestSchema] = TypeAdapter(ManifestSchema)


def _rules_and_seats(doc: ManifestSchema) -> None:
    """What one field's type cannot say: the rules make a rule set, and the policies list
    as many seats as its table has."""
    try:
        players = RuleSet.from_dict(doc["rules"]).players
    except PaohuziError as e:
        raise ManifestInvalid(f"manifest field rules: {e}") from None
    params: dict[str, Any] = dict(doc.get("params") or {})
    n = len(params.get("policies") or ())
    if n and n != players:
        raise ManifestInvalid(
            f"manifest field params.policies: {n} seat(s) for a {players}-player table"
        )
    for r, seats in enumerate(params.get("seat_policies") or ()):
        if len(seats) != players:
            raise ManifestInvalid(
                f"manifest field params.seat_policies[{r}]: {len(seats)} seat(s) for a"
                f" {players}-player table"
            )


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part not in ("function-after",):
            out += f".{part}" if out else str(part)
    return out


def _got(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else f"{text[:37]}…"


def _expected(err: dict[str, Any]) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    number = "an integer"
    if "ge" in ctx and "le" in ctx:
        return f"expected {number} in {ctx['ge']} … {ctx['le']}"
    return {
        "int_type": "expected an integer",
        "greater_than_equal": f"expected an integer ≥ {ctx.get('ge')}",
        "less_than_equal": f"expected an integer ≤ {ctx.get('le')}",
        "bool_type": "expected true or false",
        "string_type": "expected a string",
        "string_too_short": "expected a non-empty string",
        "string_too_long": f"expected at most {ctx.get('max_length')} characters",
        "string_pattern_mismatch": "expected 64 lowercase hex digits",
        "list_type": "expected a list",
        "too_long": f"expected at most {ctx.get('max_length')} items",
        "dict_type": "expected an object",
        "model_type": "expected an object",
        "literal_error": f"expected {ctx.get('expected')}",
        "missing": "missing",
    }.get(kind, str(err.get("msg", kind)).lower())


def describe(e: ValidationError) -> str:
    """The first error of ``e`` as ``manifest field LOC: expected …, got …``."""
    err = e.errors(include_url=False)[0]
    where = _where(tuple(err["loc"]))
    expected = _expected(dict(err))
    if err["type"] == "missing":
        return f"manifest field {where} is missing"
    return f"manifest field {where}: {expected}, got {_got(err.get('input'))}"


def check_manifest(doc: Any) -> ManifestSchema:
    """``doc`` (parsed JSON) checked against the schema: the same document, typed;
    :class:`ManifestInvalid` naming the first field at fault otherwise."""
    try:
        out = _ADAPTER.validate_python(doc)
    except ValidationError as e:
        raise ManifestInvalid(describe(e)) from None
    _rules_and_seats(out)
    return out
