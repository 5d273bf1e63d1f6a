"""The API against its own OpenAPI schema (schemathesis, in-process over ASGI): for
generated requests to every operation — parameters in range and, in negative mode, out of
it — no answer is a server error, and every answer has a documented status, content type
and body. The service has an import token, and each generated import is sent as generated and
again with the token (so the route's own answers are checked, not only its 401). Derandomized, with a bounded number of examples per operation and mode, so a run
is the same every time.

(Schemathesis's ``from_fixture``/``parametrize`` does not run under pytest 9, so each
operation is a parametrized test that draws its cases with ``@given``.)

An integer parameter is read as written in digits (``-`` first where it may be negative):
a float with an integral value, which JSON Schema counts as an integer and schemathesis
sends as ``10.0``, is refused (422) even in positive mode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402

from paohuzi.service.app import create_app  # noqa: E402

#: Examples per operation and generation mode.
EXAMPLES = 20

#: The service's import token.
TOKEN = "t0ken-for-the-schema-tests"

#: Every operation of the schema (the app is built without reading its store) with each
#: generation mode it has: negative needs a parameter to break.
OPERATIONS = [
    (path, method.upper(), mode)
    for path, item in create_app("/nonexistent").openapi()["paths"].items()
    for method, op in item.items()
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    if mode == GenerationMode.POSITIVE or op.get("parameters")
]


@pytest.fixture(scope="module")
def api_schema(store: Path) -> Any:
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(store, import_token=TOKEN))


def held(case: Any) -> Any:
    """The case about a run (and a hand) the store holds, where it names one."""
    p = case.path_parameters
    if p and isinstance(p.get("run"), str):
        p["run"] = "dup" if len(p["run"]) % 2 else "a"
        if isinstance(p.get("hand"), int) and not isinstance(p["hand"], bool):
            p["hand"] = abs(p["hand"]) % 30
    return case


def integral_floats(case: Any) -> bool:
    """Whether a parameter of the case is a float such as 10.0: an integer to JSON Schema,
    sent as ``10.0``, which the API refuses (422: integers are written in digits)."""
    values = [*(case.path_parameters or {}).values(), *(case.query or {}).values()]
    flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
    return any(isinstance(x, float) for x in flat)


@pytest.mark.parametrize(("path", "method", "mode"), OPERATIONS)
def test_generated_requests(api_schema: Any, path: str, method: str, mode: Any) -> None:
    op = api_schema[path][method]
    # a state's step and seat are in range for some hands only: a step the hand does not
    # have is 400 (and so is a seat with 3 players), though the schema cannot say so; nor
    # can it say which objects are replay files (any other is 422)
    excluded = [positive_data_acceptance] if path.endswith("/state") or method == "POST" else []
    # what a request about a held run may answer then: an import into a simulated run is
    # refused (409) unless its body is refused first
    held_answers = (400, 409, 413, 422) if method == "POST" else (200, 400, 404)

    @given(case=op.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: Any) -> None:
        if mode == GenerationMode.POSITIVE and integral_floats(case):
            case.call_and_validate(excluded_checks=[positive_data_acceptance])
            assert case.call().status_code == 422, case.as_curl_command()
            return
        case.call_and_validate()
        if method == "POST":
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {TOKEN}"}
            case.call_and_validate(excluded_checks=excluded)
        if mode == GenerationMode.POSITIVE and case.path_parameters:
            held(case).call_and_validate(excluded_checks=excluded)
            if excluded:
                assert case.call().status_code in held_answers, case.as_curl_command()

    check()
