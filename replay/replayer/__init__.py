"""Recorded hands back to life: :mod:`~replay.replayer.hand` (load a hand, rebuild the state
at any step), :mod:`~replay.replayer.views` (a JSON-able view of a state),
:mod:`~replay.replayer.render_text` (the table in the terminal), :mod:`~replay.replayer.verify`
(re-apply every event through the checked path), :mod:`~replay.replayer.replay_file` (one
hand as a replay file: read, written, exported) and :mod:`~replay.replayer.importing` (replay
files' hands verified for the store: :mod:`replay.record.importing` commits them). This
layer reads: nothing here writes the store (:mod:`replay.store.write` does)."""

from replay.replayer.hand import HandLog, Replayer, load_hand, replay_hand

__all__ = ["HandLog", "Replayer", "load_hand", "replay_hand"]
