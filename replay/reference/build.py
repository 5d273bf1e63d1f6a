"""``paohuzi report``'s document from the report's runs (:mod:`replay.reference.plan`;
``paohuzi report`` plays them as ``paohuzi simulate`` does), written whole.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from replay.reference import document as D
from replay.reference.plan import Scale, studies
from replay.store.runs import open_store


def complete(root: Path, name: str) -> bool:
    """Whether the store ``root`` holds run ``name`` complete (its manifest says so; the
    document checks its shards when it reads it). A run that cannot be read is not: playing
    it says why."""
    from engine.errors import PaohuziError
    from replay import store

    path = store.run_dir(root, name)
    if not (path / store.MANIFEST_NAME).is_file():
        return False
    try:
        return bool(store.read_manifest(path).get("status") == "complete")
    except (PaohuziError, OSError, ValueError):
        return False


def document(root: Path, scale: Scale) -> tuple[str, dict[str, str]]:
    """The document's text and charts from the report's runs in the store ``root``."""
    all_studies = studies(scale)
    return D.render(scale, all_studies, D.gather(open_store(root), all_studies))


def write(out: Path, text: str, svgs: dict[str, str]) -> list[Path]:
    """The document at ``out`` and each chart beside it (``reference/NAME.svg``), each file
    replaced whole (a reader never sees half of one); the paths written."""
    written = []
    for rel, body in sorted(svgs.items()):
        written.append(_replace(out.parent / rel, body))
    written.append(_replace(out, text))
    return written


def _replace(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
