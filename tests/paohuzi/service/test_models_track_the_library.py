"""The service's response models restate the library's result types by hand (the OpenAPI
schema needs them as models): held equal, field by field, so that a field added to one side
only fails here (issue 41) — not first as a 500 when a response does not validate."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from paohuzi.service import models
from replay.analysis import review_rates, stats
from replay.analysis.figures import results

#: (the model, the library type it answers for, the fields its JSON adds: properties).
PAIRS: list[tuple[Any, Any, set[str]]] = [
    (models.Rate, results.Rate, {"p"}),
    (models.Mean, results.Mean, set()),
    (models.GroupRow, results.GroupRow, set()),
    (models.PairedRow, results.PairedRow, set()),
    (models.Winning, stats.Winning, set()),
    (models.MingtangRow, stats.MingtangRow, set()),
    (models.AutoTianhu, stats.AutoTianhu, set()),
    (models.RunStats, stats.RunStats, set()),
    (models.ReviewRateRow, review_rates.RateRow, set()),
    (models.StoredReviewRates, review_rates.StoredRates, set()),
]


@pytest.mark.parametrize(("model", "kind", "extra"), PAIRS, ids=[m.__name__ for m, _, _ in PAIRS])
def test_a_model_has_the_fields_of_its_library_type(model: Any, kind: Any, extra: set[str]) -> None:
    library = {f.name for f in dataclasses.fields(kind)} | extra
    assert set(model.model_fields) == library, (
        f"models.{model.__name__} and {kind.__module__}.{kind.__name__} differ:"
        f" only the model {sorted(set(model.model_fields) - library)},"
        f" only the library {sorted(library - set(model.model_fields))}"
    )


def test_a_field_added_to_one_side_is_seen() -> None:
    @dataclasses.dataclass(frozen=True)
    class Wider(results.Rate):
        deals: int = 0

    library = {f.name for f in dataclasses.fields(Wider)} | {"p"}
    assert set(models.Rate.model_fields) != library
