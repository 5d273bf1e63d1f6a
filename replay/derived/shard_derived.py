"""The derived tables a new shard is written with (docs/LOG_FORMAT.md §10, §12), by kind, in
the order its manifest entry lists them: a simulated shard's summary then facts, an imported
shard's facts then summary — the summary only while the run's policy classes can be
summarised. The producers hand them to the store's writer
(:class:`replay.store.write.ShardTables`), which writes and lists them; ``paohuzi index``
makes those an older shard lacks (:mod:`replay.derived.indexer`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from engine.rules import RuleSet
from replay.store.facts_schema import FACTS_TABLE
from replay.store.summary_schema import SUMMARY_TABLE

__all__ = ["imported_derived", "simulated_derived"]


def simulated_derived(
    hands: pa.Table,
    events: pa.Table,
    shape: dict[str, Any],
    rules: RuleSet,
    facts: pa.Table | None = None,
) -> dict[str, pa.Table | None]:
    """A simulated shard's summary and facts. ``shape``: the run's ``rules`` and ``params``
    (:func:`~replay.derived.summaries.spec_manifest`); ``facts``: the facts the compiled
    engine counted as it played (else derived by a replay of the shard)."""
    from replay.derived.facts import shard_facts
    from replay.derived.summaries import shard_summary

    table = shard_facts(hands, events, rules, facts)
    return {SUMMARY_TABLE: shard_summary(hands, events, shape, table), FACTS_TABLE: table}


def imported_derived(
    hands: pa.Table, events: pa.Table, manifest: dict[str, Any], rules: RuleSet
) -> dict[str, pa.Table | None]:
    """An imported shard's facts and summary. The summary's rotations are the run's policy
    classes (``params.seat_policies``, which this extends in ``manifest`` with the shard's
    new ones); past :data:`~replay.store.summary_schema.MAX_SEATS` classes the run is marked
    ``seat_policies_overflow`` and its shards get no more summaries (its figures then come
    from its hands)."""
    from replay.derived.facts import shard_facts
    from replay.derived.summaries import shard_summary
    from replay.derived.summarize import seat_assignments
    from replay.store.summary_schema import add_policy_classes

    facts = shard_facts(hands, events, rules)
    out: dict[str, pa.Table | None] = {FACTS_TABLE: facts}
    params = manifest["params"]
    if add_policy_classes(params, seat_assignments(hands, rules.players)):
        shape = {"rules": manifest["rules"], "params": params}
        out[SUMMARY_TABLE] = shard_summary(hands, events, shape, facts)
    return out
