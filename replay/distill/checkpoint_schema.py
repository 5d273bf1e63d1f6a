"""The schema of a distillation checkpoint (``OUT/checkpoint.json``): every field's type and
bounds, so a damaged or forged file is one line naming the field, never a traceback."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs

from engine.policies import weights as W
from replay.tune.checkpoint_file import first_fault

_NUM = cs.float_schema(allow_inf_nan=False, strict=True)
_COUNT = cs.int_schema(ge=0, le=2**53, strict=True)
_SEED = cs.int_schema(ge=0, le=2**64 - 1, strict=True)


def _obj(fields: dict[str, tuple[cs.CoreSchema, bool]]) -> cs.CoreSchema:
    return cs.typed_dict_schema(
        {k: cs.typed_dict_field(s, required=req) for k, (s, req) in fields.items()},
        extra_behavior="forbid",
        strict=True,
    )


def _triple() -> cs.CoreSchema:
    return cs.list_schema(_NUM, min_length=3, max_length=3, strict=True)


def _validation() -> cs.CoreSchema:
    return _obj(
        {
            "seed": (_SEED, True),
            "deals": (_COUNT, True),
            "score_ci": (_triple(), True),
            "win_ci": (_triple(), True),
            "seconds": (_NUM, True),
        }
    )


def _assessment() -> cs.CoreSchema:
    one = _obj({"decisions": (_COUNT, True), "agreement": (_NUM, True), "regret": (_NUM, True)})
    return _obj({"discard": (one, True), "claim": (one, True)})


@cache
def _validator() -> SchemaValidator:
    table = cs.dict_schema(
        cs.str_schema(max_length=40, strict=True), _NUM, max_length=len(W.PARAMS), strict=True
    )
    round_ = _obj(
        {
            "r": (_COUNT, True),
            "decisions": (
                _obj({"discard": (_COUNT, True), "claim": (_COUNT, True)}),
                True,
            ),
            "rows": (_COUNT, True),
            "table": (table, True),
            "before": (_assessment(), True),
            "after": (_assessment(), True),
            "validation": (_validation(), True),
            "seconds": (cs.dict_schema(cs.str_schema(max_length=20), _NUM, max_length=8), True),
        }
    )
    settings = cs.dict_schema(cs.str_schema(max_length=40, strict=True), cs.any_schema(),
                              max_length=40, strict=True)  # fmt: skip
    return SchemaValidator(
        _obj(
            {
                "format": (cs.str_schema(strict=True), True),
                "version": (cs.int_schema(strict=True), True),
                "sha256": (cs.str_schema(pattern="^[0-9a-f]{64}$", strict=True), True),
                "settings": (settings, True),
                "rounds": (cs.list_schema(round_, max_length=1000, strict=True), True),
                "final": (cs.nullable_schema(_validation()), True),
                "best": (cs.nullable_schema(_COUNT), True),
                "stop_reason": (cs.str_schema(max_length=200, strict=True), True),
            }
        )
    )


def problem(doc: Any) -> str | None:
    """What is wrong with a parsed checkpoint (the first error, one line), or None."""
    try:
        _validator().validate_python(doc)
    except ValidationError as e:
        return first_fault(e)
    return None
