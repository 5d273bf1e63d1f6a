"""Recorded hands back to life: :mod:`~replay.replayer.hand` (load a hand, rebuild the state
at any step), :mod:`~replay.replayer.views` (a JSON-able view of a state),
:mod:`~replay.replayer.render_text` (the table in the terminal), :mod:`~replay.replayer.verify`
(re-apply every event through the checked path) and :mod:`~replay.replayer.exchange`
(replay files)."""

from replay.replayer.hand import HandLog, Replayer, load_hand, replay_hand

__all__ = ["HandLog", "Replayer", "load_hand", "replay_hand"]
