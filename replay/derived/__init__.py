"""The data derived from a shard's ``hands`` and ``events`` tables, above the store and below
the recorder: the facts rows (:mod:`~replay.derived.facts`, docs/LOG_FORMAT.md §12), the
summary rows (:mod:`~replay.derived.summarize`, :mod:`~replay.derived.summarize_events`, §10;
their SQL reference :mod:`~replay.derived.summarize_sql`), the files that hold them
(:mod:`~replay.derived.summaries`, :mod:`~replay.derived.facts_files`: written, checked) and
``paohuzi index``, which makes the ones a run lacks (:mod:`~replay.derived.indexer`)."""
