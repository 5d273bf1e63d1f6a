"""Playing and recording: :mod:`~replay.record.schema` (the two tables and their codes),
:mod:`~replay.record.recorder` (column buffers filled while a hand is played) and
:mod:`~replay.record.runner` (sessions, seeds, shards, the worker pool, resume)."""
