"""Keep the numba disk cache of the state machine consistent with the code it inlines.

numba invalidates a cached kernel only when *its own* source file changes; the state machine
and play loop compile in kernels and constant tables of other files (engine.fast.hu, the
tables built from engine.groups / engine.policies.features …). :func:`ensure_fresh` (called
when engine.fast.state is imported) hashes, per guarded module, every other file it depends
on, and when that hash differs from the one recorded, deletes the module's cache files so it
recompiles.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_ENGINE = _HERE.parent

# The reference modules the tables are built from (rarely edited; all of them, to be safe).
_REFERENCE = tuple(sorted(_ENGINE.glob("*.py"))) + (
    _ENGINE / "policies" / "features.py",
    _ENGINE / "policies" / "greedy.py",
)
_HU = (_HERE / "hu.py", _HERE / "scoring.py")


def _f(*names: str) -> tuple[Path, ...]:
    return tuple(_HERE / f"{n}.py" for n in names)


#: Per guarded module: the other files whose code or tables its kernels inline.
DEPENDS: dict[str, tuple[Path, ...]] = {
    "pyrandom": (),
    "deck": (_ENGINE / "deck.py",),
    "hu_bridge": _HU + _REFERENCE,
    "state": _f("hu_bridge") + _HU + _REFERENCE,
    "features": _f("state") + _REFERENCE,
    "policies": _f("state", "features", "pyrandom") + _REFERENCE,
    "play": _f("state", "features", "policies", "pyrandom", "hu_bridge") + _HU + _REFERENCE,
}
_CACHE = _HERE / "__pycache__"


def digest(paths: tuple[Path, ...]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode())
        with contextlib.suppress(OSError):
            h.update(p.read_bytes())
    return h.hexdigest()


def ensure_fresh() -> list[str]:
    """Drop the caches of guarded modules whose dependencies changed; their names."""
    dropped = []
    for module, deps in DEPENDS.items():
        stamp = _CACHE / f"{module}.deps.sha256"
        d = digest(deps)
        try:
            if stamp.read_text() == d:
                continue
        except OSError:
            pass
        if _CACHE.is_dir():
            for f in list(_CACHE.glob(f"{module}.*.nbi")) + list(_CACHE.glob(f"{module}.*.nbc")):
                with contextlib.suppress(OSError):
                    f.unlink()
        dropped.append(module)
        with contextlib.suppress(OSError):
            _CACHE.mkdir(exist_ok=True)
            tmp = stamp.with_suffix(".tmp")
            tmp.write_text(d)
            tmp.replace(stamp)
    return dropped
