"""Keep the numba disk cache of the state machine consistent with the code it inlines.

numba invalidates a cached kernel only when *its own* source file changes; the state machine,
the policies and the play loop compile in kernels and constant tables of other files
(engine.fast.hu, the tables built from engine.groups / engine.policies.features …). Each of
those modules ends with :func:`guard`, which hands its dispatchers and the files listed in
:data:`DEPENDS` to :func:`engine.fast.cache.drop_stale` (the package's one cache utility:
it finds the cache directory numba really uses, also under ``NUMBA_CACHE_DIR``). Importing
this module first also runs :func:`engine.fast.cache.configure` before any kernel is
decorated.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.fast import cache as _cache

_cache.configure()

_HERE = Path(__file__).resolve().parent
_ENGINE = _HERE.parent

# The reference modules the tables are built from (rarely edited; all of them, to be safe).
_REFERENCE = tuple(sorted(_ENGINE.glob("*.py"))) + (
    _ENGINE / "policies" / "features.py",
    _ENGINE / "policies" / "greedy.py",
    _ENGINE / "policies" / "heuristic.py",
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
    "replay": _f("state", "play", "features", "policies", "pyrandom", "hu_bridge")
    + _HU
    + _REFERENCE,
}


def guard(name: str, namespace: Mapping[str, Any]) -> bool:
    """Drop the cached code of module ``name`` (its globals ``namespace``) if a file it
    inlines changed; call at the end of the module, before any kernel runs."""
    from numba.core.dispatcher import Dispatcher

    module = namespace["__name__"]
    ds = [
        v
        for v in namespace.values()
        if isinstance(v, Dispatcher) and getattr(v.py_func, "__module__", None) == module
    ]
    return _cache.drop_stale(name, ds, DEPENDS[name])
