"""The 跑胡子 command line and its tools: hand calculator, simulator, recorder and replayer.

The Python API for recorded hands: :func:`open_store`, :func:`load_hand`, :func:`replay_hand`.
"""

from replay.replayer import load_hand, replay_hand
from replay.store import open_store

__all__ = ["load_hand", "open_store", "replay_hand"]
