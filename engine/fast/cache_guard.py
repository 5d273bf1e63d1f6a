"""Keep the numba disk cache of each compiled module consistent with what it compiled in.

numba invalidates a cached kernel only when *its own* source file changes; the kernels also
compile in two other things:

* **constant tables and codes** derived from the reference (engine.groups, engine.mingtang,
  engine.scoring, the enums …), all in :mod:`engine.fast.codes`: their one digest,
  ``codes.DIGEST``, is part of every module's cache stamp (:func:`engine.fast.cache.drop_stale`
  adds it), so a change of the reference's rules recompiles every kernel, and only that;
* **the code of other modules** they call (numba inlines it): the files listed in
  :data:`DEPENDS`, with the reference policies whose parameters the compiled policies hold.

Each guarded module ends with :func:`guard`, which hands its dispatchers and its
:data:`DEPENDS` files to :func:`engine.fast.cache.drop_stale` (the package's one cache
utility: it finds the cache directory numba really uses, also under ``NUMBA_CACHE_DIR``).
Importing this module first also runs :func:`engine.fast.cache.configure` before any kernel
is decorated.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.fast import cache as _cache

_cache.configure()

_HERE = Path(__file__).resolve().parent
_ENGINE = _HERE.parent

# The reference policies whose parameters (weights, flags) the compiled policies hold.
_POLICIES = (
    _ENGINE / "policies" / "features.py",
    _ENGINE / "policies" / "greedy.py",
    _ENGINE / "policies" / "heuristic.py",
    _ENGINE / "policies" / "learned.py",
    _ENGINE / "policies" / "weights.py",  # the parameter table: the weight array's indices
)


def _f(*names: str) -> tuple[Path, ...]:
    return tuple(_HERE / f"{n}.py" for n in names)


#: Per guarded module: the other files whose code (or, for the policies, parameters) its
#: kernels compile in. The rule tables and codes are covered by ``codes.DIGEST``.
DEPENDS: dict[str, tuple[Path, ...]] = {
    "pyrandom": (),
    "deck": (_ENGINE / "deck.py",),
    "hu": (),
    "hu_bridge": _f("hu"),
    "hu_bench": _f("hu"),
    "state": _f("hu_bridge", "hu"),
    "features": _f("state") + _POLICIES,
    "heuristic": _f("state", "features") + _POLICIES,
    "greedy": _f("state", "features", "heuristic", "pyrandom") + _POLICIES,
    "learned": _f("state", "features", "heuristic", "greedy", "pyrandom") + _POLICIES,
    "policies": _f("state", "features", "heuristic", "greedy", "learned", "pyrandom") + _POLICIES,
    "search": _f(
        "state",
        "features",
        "heuristic",
        "greedy",
        "learned",
        "policies",
        "pyrandom",
        "hu_bridge",
        "hu",
    )
    + _POLICIES
    + (_ENGINE / "search.py",),
    "play": _f(
        "state",
        "features",
        "heuristic",
        "greedy",
        "learned",
        "policies",
        "search",
        "pyrandom",
        "hu_bridge",
        "hu",
        "facts",
    )
    + _POLICIES,
    "facts": _f("state", "hu_bridge", "hu"),
    "verify": _f(
        "state",
        "play",
        "search",
        "features",
        "heuristic",
        "greedy",
        "learned",
        "policies",
        "pyrandom",
        "hu_bridge",
        "hu",
        "facts",
    )
    + _POLICIES,
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
