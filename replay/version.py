"""The installed paohuzi's version: what ``paohuzi --version``, a run's manifest and the
service's ``/version`` say."""

from __future__ import annotations


def package_version() -> str:
    """The installed paohuzi's version (``unknown`` when it is not installed)."""
    from importlib import metadata

    try:
        return metadata.version("paohuzi")
    except metadata.PackageNotFoundError:
        return "unknown"
