"""Playing and recording, from the bottom up (each module imports only those before it, and
:mod:`replay.schema`, the two tables and their codes, below the store):
:mod:`~replay.record.recorder` (column buffers filled while a hand is played),
:mod:`~replay.record.spec` (the run spec: layout, seeds, identity),
:mod:`~replay.record.fast_engine` (shards played by the compiled engine),
:mod:`~replay.record.shard` (play one shard with either engine, write its files),
:mod:`~replay.record.backend` (inline or a process pool), :mod:`~replay.record.ray_backend`
(Ray tasks), :mod:`~replay.record.runner` (the run: manifest, resume, which backend) and
:mod:`~replay.record.importing` (hands from outside, checked by
:mod:`replay.replayer.importing`, committed as a shard). Every write goes through the store's
one writer, :mod:`replay.store.write`."""
