"""Keep the numba disk cache of the state machine consistent with the code it inlines.

numba invalidates a cached kernel only when *its own* source file changes; the state machine
and play loop compile in kernels of other files (engine.fast.hu, the tables built from
engine.groups / engine.actions …). :func:`ensure_fresh` (called when engine.fast.state is
imported) hashes every such source and, when the hash differs from the one recorded, deletes
the cache files of the modules that inline them, so they recompile.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_ENGINE = _HERE.parent
#: Modules whose cached kernels inline code or tables from other files.
GUARDED = ("state", "play", "policies", "hu_bridge", "pyrandom")
#: Every source those kernels depend on.
SOURCES = (
    *(_HERE / f"{m}.py" for m in GUARDED),
    _HERE / "hu.py",
    _HERE / "scoring.py",
    _ENGINE / "actions.py",
    _ENGINE / "cards.py",
    _ENGINE / "groups.py",
    _ENGINE / "rules.py",
    _ENGINE / "state.py",
)
_STAMP = _HERE / "__pycache__" / "fast_state_sources.sha256"


def sources_digest() -> str:
    h = hashlib.sha256()
    for p in SOURCES:
        h.update(p.name.encode())
        with contextlib.suppress(OSError):
            h.update(p.read_bytes())
    return h.hexdigest()


def ensure_fresh() -> bool:
    """Drop stale caches of the guarded modules; True if something was dropped."""
    digest = sources_digest()
    try:
        if _STAMP.read_text() == digest:
            return False
    except OSError:
        pass
    cache = _STAMP.parent
    dropped = False
    if cache.is_dir():
        for m in GUARDED:
            for f in list(cache.glob(f"{m}.*.nbi")) + list(cache.glob(f"{m}.*.nbc")):
                with contextlib.suppress(OSError):
                    f.unlink()
                    dropped = True
    with contextlib.suppress(OSError):
        cache.mkdir(exist_ok=True)
        tmp = _STAMP.with_suffix(".tmp")
        tmp.write_text(digest)
        tmp.replace(_STAMP)
    return dropped
