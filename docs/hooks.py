"""MkDocs hooks (mkdocs.yml ``hooks:``) of the documentation site.

* Pages whose text lives outside docs/: the home page is the top README and the Dashboard
  page dashboard/README.md, read at build time, so neither is written twice. Their links are
  written for the repository (from the file's own folder: ``docs/COMMANDS.md``,
  ``docs/screenshots/first_view.png``, ``dashboard/README.md``); each is rewritten to the page or
  file that holds it on the site. A link to a file the site does not have is left as
  written, so ``mkdocs build --strict`` reports it.
* The CLI reference (mkdocs-click): a command's ``\\b`` paragraph (its examples, which click
  prints one to a line) becomes a code block instead of one run-on line.
* The Python API reference (mkdocstrings): the docstrings' Sphinx roles (``:meth:``) are
  dropped before their code spans.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs_click import _docs as mkdocs_click_docs

ROOT = Path(__file__).resolve().parents[1]

#: A file of the repository outside docs/ → the page of the site it becomes.
PAGES = {"README.md": "index.md", "dashboard/README.md": "dashboard.md"}

_LINK = re.compile(r"(\]\()([^)\s#]+)([^)]*\))")


def _site_target(source: str, target: str) -> str:
    """``target``, a link in repository file ``source``, as a link from the page it becomes."""
    if "://" in target or target.startswith(("/", "mailto:")):
        return target
    path = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
    if path in PAGES:
        site_path = PAGES[path]
    elif path.startswith("docs/"):
        site_path = path.removeprefix("docs/")
    else:
        return target
    return posixpath.relpath(site_path, posixpath.dirname(PAGES[source]) or ".")


def page_text(source: str) -> str:
    """The text of repository file ``source`` with its links rewritten for the site."""
    text = (ROOT / source).read_text(encoding="utf-8")
    return _LINK.sub(lambda m: m[1] + _site_target(source, m[2]) + m[3], text)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for source, page in PAGES.items():
        if files.get_file_from_path(page) is not None:
            raise RuntimeError(f"docs/{page} exists: the site builds that page from {source}")
        files.append(File.generated(config, page, content=page_text(source)))
    return files


#: A Sphinx role of a docstring (``:meth:`State.clone```), as mkdocstrings leaves it: the role's
#: name before the code span, and the ``~`` that asks Sphinx for the last name only.
_ROLE = re.compile(r":(?:meth|func|class|mod|data|attr|exc|obj):<code>~?")


def on_page_content(html: str, **_: object) -> str:
    """The docstrings' Sphinx roles as plain code spans."""
    return _ROLE.sub("<code>", html)


def _fence_verbatim(lines: Iterable[str]) -> Iterator[str]:
    r"""A command's help lines with each ``\b`` paragraph (click prints it unwrapped: the
    examples) as a code block, so Markdown does not join its lines into one."""
    fenced = False
    for line in lines:
        if line.strip() == "\b":
            fenced = True
            yield "```text"
        elif fenced and not line.strip():
            fenced = False
            yield "```"
            yield line
        else:
            yield line
    if fenced:
        yield "```"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """mkdocs-click writes a command's help as Markdown, dropping the ``\\b`` markers: each
    marked paragraph is fenced first (its description function, wrapped)."""
    describe = getattr(mkdocs_click_docs, "_make_description", None)
    if describe is not None and not getattr(describe, "fenced", False):

        def fenced_description(*args: Any, **kwargs: Any) -> Iterator[str]:
            return _fence_verbatim(describe(*args, **kwargs))

        fenced_description.fenced = True  # type: ignore[attr-defined]
        mkdocs_click_docs._make_description = fenced_description
    return config
