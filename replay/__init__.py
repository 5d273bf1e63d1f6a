"""Everything about logs, in the order data flows (see docs/ARCHITECTURE.md "How data flows"):
:mod:`replay.record` plays and records hands, :mod:`replay.store` keeps and catalogues them,
:mod:`replay.replayer` rebuilds, verifies, renders, exports and imports them,
:mod:`replay.analysis` turns them into statistics, and :mod:`paohuzi.cli` is the command line.

The Python API for recorded hands: :func:`open_store`, :func:`load_hand`, :func:`replay_hand`
(loaded on first use, so ``import replay`` costs nothing).
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "load_hand": "replay.replayer.hand",
    "replay_hand": "replay.replayer.hand",
    "open_store": "replay.store.runs",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'replay' has no attribute {name!r}")
