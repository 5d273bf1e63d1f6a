"""Where numba keeps the compiled code of :mod:`engine.fast`, and whether it is there yet.

numba caches next to the sources (``engine/fast/__pycache__``). When that is not writable (a
read-only install), :func:`configure` points ``NUMBA_CACHE_DIR`` at a per-user directory,
``$XDG_CACHE_HOME/paohuzi/numba`` (default ``~/.cache/paohuzi/numba``), before numba is
imported (or, if it already is, sets numba's config the same way), so every compiled part of
the package shares one predictable location. A ``NUMBA_CACHE_DIR`` set by the user is kept.

Plain Python, no numba import: safe to call first thing in a module that compiles.

* :func:`configure` — the above; returns the cache directory in use (None: in-tree).
* :func:`is_cached` — whether the cache holds loadable code for every given dispatcher (used
  to say once on stderr that a first compile is coming).
* :func:`drop_stale` — delete a module's cached code when another file its kernels inline
  (numba watches only the module's own source) or the rule tables they hold
  (``engine.fast.codes.DIGEST``) have changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
_configured: str | None | bool = False


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/paohuzi/numba``, or ``~/.cache/paohuzi/numba``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "paohuzi" / "numba"


def _writable(directory: Path) -> bool:
    """Whether numba can write its cache in ``directory`` (tested as numba tests it: create
    the directory, then a file in it; os.access is wrong for root and read-only mounts)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=directory).close()
    except OSError:
        return False
    return True


def configure() -> str | None:
    """Use a per-user numba cache when ``engine/fast/__pycache__`` is not writable.

    Returns the ``NUMBA_CACHE_DIR`` in effect (None when numba caches in the tree). Idempotent.
    """
    global _configured
    if _configured is not False:
        return _configured  # type: ignore[return-value]
    chosen = os.environ.get("NUMBA_CACHE_DIR") or None
    if chosen is None and not _writable(_HERE / "__pycache__"):
        path = user_cache_dir()
        with contextlib.suppress(OSError):
            path.mkdir(parents=True, exist_ok=True)
        chosen = str(path)
        os.environ["NUMBA_CACHE_DIR"] = chosen
        config = sys.modules.get("numba.core.config")
        if config is not None:  # numba already read its environment: tell it directly
            config.CACHE_DIR = chosen  # type: ignore[attr-defined]
    _configured = chosen
    return chosen


def _index_file(dispatcher: Any) -> Any:
    cache = getattr(dispatcher, "_cache", None)
    return getattr(cache, "_cache_file", None)


def is_cached(dispatchers: Iterable[Any]) -> bool:
    """True when every dispatcher has a fresh, non-empty cache index (its code will load
    rather than compile). Conservative: False when it cannot tell."""
    try:
        for d in dispatchers:
            f = _index_file(d)
            if f is None or not f._load_index():
                return False
    except Exception:
        return False
    return True


def _digest(paths: Iterable[Path]) -> str:
    """The stamp of a module's cache: the digest of the rule tables every kernel holds
    (``engine.fast.codes.DIGEST``) and of the files in ``paths``."""
    from engine.fast.codes import DIGEST

    h = hashlib.sha256(DIGEST.encode())
    for p in paths:
        h.update(p.name.encode())
        with contextlib.suppress(OSError):
            h.update(p.read_bytes())
    return h.hexdigest()


def drop_stale(name: str, dispatchers: Iterable[Any], depends: Iterable[Path]) -> bool:
    """Delete the cached code of module ``name`` (whose entry points are ``dispatchers``; they
    locate the cache) when the files in ``depends`` or the rule tables changed since it was
    compiled; True if anything was dropped. Call it before the first call of any of them."""
    ds = list(dispatchers)
    files = [f for f in map(_index_file, ds) if f is not None]
    if not files:
        return False
    cache_dir = Path(files[0]._cache_path)
    stamp = cache_dir / f"{name}.deps.sha256"
    d = _digest(depends)
    try:
        if stamp.read_text() == d:
            return False
    except OSError:
        pass
    # every function of the module, at any line (an edit moves them: old names linger)
    for p in [*cache_dir.glob(f"{name}.*.nbi"), *cache_dir.glob(f"{name}.*.nbc")]:
        with contextlib.suppress(OSError):
            p.unlink()
    with contextlib.suppress(OSError):
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = stamp.with_suffix(".tmp")
        tmp.write_text(d)
        tmp.replace(stamp)
    return True


@contextlib.contextmanager
def compile_lock(dispatchers: Iterable[Any] = ()) -> Any:
    """Hold an exclusive lock on the cache directory while kernels are first called, so that
    processes starting together (test workers, a pool) never compile and write the same
    cache entries at once: the first compiles, the others wait and then load its code.

    When every one of ``dispatchers`` is already cached, no lock is taken: a process that
    only loads code never waits behind another one compiling something else."""
    import fcntl

    ds = list(dispatchers)
    if ds and is_cached(ds):
        yield
        return
    configure()
    base = Path(os.environ.get("NUMBA_CACHE_DIR") or (_HERE / "__pycache__"))
    with contextlib.suppress(OSError):
        base.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(base / ".compile.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # an unwritable cache: nothing is written, nothing to serialise
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
