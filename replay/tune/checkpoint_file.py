"""The JSON checkpoint file of ``paohuzi tune`` and ``paohuzi distill``: a document
``{"format", "version", "sha256", **body}``, the SHA-256 over the body's canonical JSON,
written atomically and read back checked — a regular file of bounded size, JSON, its
format, its version, the caller's schema, then the digest — each failure one line."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_core import ValidationError

from engine.errors import PaohuziError
from replay.store.files import atomic_write

#: What the caller asks a damaged checkpoint's owner to do.
AGAIN = "remove it to start again"


def digest(body: dict[str, Any]) -> str:
    canonical = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def write(path: Path, fmt: str, version: int, body: dict[str, Any]) -> None:
    """Write the checkpoint atomically (a temporary file, fsync, rename)."""
    doc = {"format": fmt, "version": version, "sha256": digest(body), **body}
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    atomic_write(path, (text + "\n").encode())


def read(
    path: Path,
    fmt: str,
    version: int,
    max_bytes: int,
    problem: Callable[[dict[str, Any]], str | None],
    noun: str,
    command: str,
    error: type[PaohuziError],
) -> dict[str, Any] | None:
    """The checked document at ``path``, None if there is none; ``error`` (one line naming
    the file) if it cannot be read, is not JSON, not a ``noun`` checkpoint (``fmt``), of
    another version of ``paohuzi COMMAND``, fails the schema (``problem``: the first fault
    or None) or its checksum."""
    from replay.store.files import NOT_JSON, read_json_document

    try:
        doc = read_json_document(path, max_bytes, error)
    except FileNotFoundError:
        return None
    if doc is NOT_JSON:
        raise error(f"{path}: not a {noun} checkpoint (not JSON; {AGAIN})")
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise error(f"{path}: not a {noun} checkpoint ({AGAIN})")
    if doc.get("version") != version:
        raise error(f"{path}: a checkpoint of another version of paohuzi {command} ({AGAIN})")
    why = problem(doc)
    if why:
        raise error(f"{path}: {why} ({AGAIN})")
    body = {k: v for k, v in doc.items() if k not in ("format", "version", "sha256")}
    if digest(body) != doc["sha256"]:
        raise error(f"{path}: damaged (its checksum differs; {AGAIN})")
    return doc


def first_fault(e: ValidationError) -> str:
    """The first error of ``e`` as ``field LOC: expected …, got …``."""
    from replay.store.manifest_schema import expected_text, shown_value

    err = e.errors(include_url=False)[0]
    where = ""
    for part in err["loc"]:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    if err["type"] == "missing":
        return f"field {where} is missing"
    if err["type"] == "extra_forbidden":
        return f"field {where} is unknown"
    expected = expected_text(dict(err))
    return f"field {where}: {expected}, got {shown_value(err.get('input'))}"
