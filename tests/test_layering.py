"""The house's layering, read from the code and held to the layer list of ``pyproject.toml``
(``[tool.paohuzi.packages]``: who may import whom among the top packages, ``paohuzi`` (the
front doors) and ``dashboard`` → ``replay`` → ``engine``; ``[tool.paohuzi.layers]``: the layers
inside each, from the bottom up), which docs/ARCHITECTURE.md quotes; and no modules of a
top package import each other in a circle — imports inside functions (lazy ones) included,
since they only hide a circle, they do not remove it.

An edge goes from a module to the module it names: ``from a.b import c`` is an edge to
``a.b.c`` when that is a module of the project, else to ``a.b``. A package that loads its
names on first use (``replay.store``: a ``_WHERE`` table of name → submodule, read by
``importlib``) has an edge to each submodule of its table, so a circle through it is seen.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _layering() -> dict[str, Any]:
    """The ``[tool.paohuzi]`` tables of ``pyproject.toml``: ``packages`` and ``layers``."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        tool = tomllib.load(f)["tool"]["paohuzi"]
    return {key: tool[key] for key in ("packages", "layers")}


#: Who may import whom: a top package imports itself and the ones ``pyproject.toml`` lists
#: for it. The front doors (``paohuzi``: the command line and the service) import what they
#: need and are imported by nothing of the house.
BELOW = {top: {top, *others} for top, others in _layering()["packages"].items()}
PACKAGES = tuple(BELOW)


#: A string that names a module of the house (``engine.policies.greedy:GreedyPolicy``).
_MODULE_TEXT = re.compile(rf"((?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+)(?::[A-Za-z_]\w*)?")


def _loads(func: ast.expr) -> bool:
    """Whether a call of ``func`` loads a module by name (``importlib.import_module``,
    ``import_module``, ``__import__``)."""
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("import_module", "__import__")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports, anywhere in its file."""
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join([*pkg, base] if base else pkg)
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names
            ]
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(x, ast.Name) and x.id == "_WHERE" for x in node.targets)
            and isinstance(node.value, ast.Dict)
        ):  # a lazy facade: name -> submodule of this package
            targets = [
                f"{name}.{v.value}"
                for v in node.value.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str)
            ]
        else:
            # a module loaded by importlib.import_module or __import__: named in the call, in a
            # table (a dict's value: "pkg.module" or "pkg.module:Name") or as "pkg.module:Name"
            named: list[ast.expr] = []
            if isinstance(node, ast.Call) and node.args and _loads(node.func):
                named = [node.args[0]]
            elif isinstance(node, ast.Dict):
                named = [v for v in node.values if v is not None]
            elif isinstance(node, ast.Constant) and ":" in str(node.value):
                named = [node]
            for v in named:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    m = _MODULE_TEXT.fullmatch(v.value)
                    if m is not None and m.group(1) in modules:  # not "paohuzi.duckdb"
                        targets.append(m.group(1))
        for t in targets:
            while t and t not in modules:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_imports_flow_downward() -> None:
    upward = [
        f"{a} imports {b}"
        for a, targets in _graph().items()
        for b in sorted(targets)
        if b.split(".")[0] not in BELOW[a.split(".")[0]]
    ]
    assert not upward, "\n".join(upward)


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_circles_of_modules() -> None:
    graph = _graph()
    for pkg in PACKAGES:
        inner = {
            a: {b for b in bs if b.split(".")[0] == pkg}
            for a, bs in graph.items()
            if a.split(".")[0] == pkg
        }
        circles = _circles(inner)
        assert not circles, f"import circles in {pkg}/: " + "; ".join(
            " ↔ ".join(c) for c in circles
        )


#: Where the folders, the data flow and the layers are written (they were in the README).
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"


def _section(text: str, title: str) -> str:
    """The section ``## title`` of a Markdown text, up to the next ``## `` heading."""
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _architecture() -> str:
    return ARCHITECTURE.read_text(encoding="utf-8")


#: The layers inside each top package, from the bottom up, at the level of its subpackages
#: (``pyproject.toml``'s ``[tool.paohuzi.layers]``): a layer imports only itself and the
#: layers below it. The modules of a package's own folder are the layer named after it; its
#: ``__init__`` is its face (it hands names on, loaded on first use) and no layer.
LAYERS: dict[str, tuple[str, ...]] = {
    top: tuple(order) for top, order in _layering()["layers"].items()
}


def test_the_architecture_page_quotes_the_layer_list() -> None:
    # docs/ARCHITECTURE.md's "Layers" shows pyproject.toml's tables as they stand there
    quoted = re.findall(r"^```toml\n(.*?)^```", _section(_architecture(), "Layers"), re.M | re.S)
    assert len(quoted) == 1, "docs/ARCHITECTURE.md's Layers section has no one TOML block"
    assert tomllib.loads(quoted[0])["tool"]["paohuzi"] == _layering(), (
        "docs/ARCHITECTURE.md quotes another layer list than pyproject.toml's [tool.paohuzi]"
    )


def test_the_layer_list_names_the_packages_the_wheel_holds() -> None:
    with open(ROOT / "pyproject.toml", "rb") as f:
        found = tomllib.load(f)["tool"]["setuptools"]["packages"]["find"]["include"]
    assert {p.rstrip("*") for p in found} == set(PACKAGES)
    assert all(
        set(others) <= set(PACKAGES) - {top} for top, others in _layering()["packages"].items()
    )
    assert _circles({top: set(others) for top, others in _layering()["packages"].items()}) == []


def _layer(name: str, modules: dict[str, Path]) -> str | None:
    """The layer of module ``name``: its top package's subpackage, the top package for a
    module of its own folder; None for a top package's face (its ``__init__``)."""
    parts = name.split(".")
    if len(parts) == 1:
        return None
    sub = ".".join(parts[:2])
    return sub if (ROOT / parts[0] / parts[1]).is_dir() else parts[0]


def test_packages_import_downward_and_in_no_circle() -> None:
    modules = _modules()
    edges: set[str] = set()
    for a, targets in _graph().items():
        for b in targets:
            la, lb = _layer(a, modules), _layer(b, modules)
            if la and lb and la != lb and la.split(".")[0] == lb.split(".")[0]:
                edges.add(f"{la} -> {lb}")
    assert set(LAYERS) == set(PACKAGES), LAYERS
    for top, order in LAYERS.items():
        subs = {s for n in modules if n.split(".")[0] == top if (s := _layer(n, modules))}
        assert subs == set(order), (
            f"{top}: the layers are {sorted(subs)} (pyproject.toml says {order})"
        )
    rank = {layer: i for order in LAYERS.values() for i, layer in enumerate(order)}
    upward = {e for e in edges if rank[e.split(" -> ")[0]] < rank[e.split(" -> ")[1]]}
    assert sorted(upward) == [], "imports from a lower layer to a higher one"
    graph: dict[str, set[str]] = {}
    for e in edges:
        a, b = e.split(" -> ")
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    assert _circles(graph) == []


def test_the_reader_sees_lazy_imports_and_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    modules = _modules()
    # a lazy import (inside a function) is an edge like any other
    lazy = _imports("replay.derived.indexer", modules["replay.derived.indexer"], modules)
    assert "replay.pool" in lazy and "replay.derived.summaries" in lazy
    # the facade replay.store leads to the modules it loads on first use
    facade = _imports("replay.store", modules["replay.store"], modules)
    assert {"replay.store.runs", "replay.store.catalog", "replay.store.layout"} <= facade


def test_no_test_module_imports_another() -> None:
    """Shared builders live in tests/helpers (or a conftest's fixtures); a test module never
    imports a test module or a conftest, whose names pytest does not keep apart."""
    bad = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                last = n.rpartition(".")[2]
                if last.startswith("test_") or last == "conftest":
                    bad.append(f"{path.relative_to(ROOT)} imports {n}")
    assert not bad, "\n".join(bad)


def test_the_folder_tables_name_every_top_folder() -> None:
    # docs/ARCHITECTURE.md's "What is here" table and the README's folder map: each folder of
    # a table exists, each package is in both
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for where, table in (
        ("docs/ARCHITECTURE.md", _section(_architecture(), "What is here")),
        ("README.md", _section(readme, "Folders")),
    ):
        listed = set(re.findall(r"^\| `([a-z_]+)/` \|", table, re.M))
        assert packages <= listed, f"packages missing from the {where} table: {packages - listed}"
        assert all((ROOT / name).is_dir() or name == "data" for name in listed), listed


def test_the_data_flow_names_every_subpackage() -> None:
    # each subpackage of replay/, paohuzi/ and engine/ appears in "How data flows"
    flow = _section(_architecture(), "How data flows")
    for pkg in ("replay", "paohuzi", "engine"):
        for init in sorted((ROOT / pkg).glob("*/__init__.py")):
            sub = init.parent.name
            assert f"{sub}/" in flow, f"{pkg}/{sub}/ is not in docs/ARCHITECTURE.md's data flow"


def _private_uses(name: str, source: str, others: set[str], is_pkg: bool = False) -> list[str]:
    """The ``_private`` names of the modules ``others`` that module ``name`` (of source text
    ``source``) imports: ``from m import _x``, ``m._x`` after ``import m [as y]`` or
    ``from pkg import m [as y]``, and ``"m:_x"`` (a name loaded by importlib). Dunder names
    (``__version__``) are public."""

    def private(n: str) -> bool:
        return n.startswith("_") and not (n.startswith("__") and n.endswith("__"))

    tree = ast.parse(source)
    bound: dict[str, str] = {}  # a name of this module -> the module of ``others`` it is
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join([*pkg, base] if base else pkg)
            for a in node.names:
                if f"{base}.{a.name}" in others:
                    bound[a.asname or a.name] = f"{base}.{a.name}"
                elif base in others and base != name and private(a.name):
                    out.append(f"{name} imports {base}.{a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in others:
                    bound[a.asname or a.name] = a.name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            module, colon, attr = node.value.partition(":")
            if colon and module in others and module != name and private(attr):
                out.append(f"{name} imports {module}.{attr}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            try:
                target = ast.unparse(node.value)
            except Exception:  # pragma: no cover - unparse handles every expression
                continue
            module = bound.get(target, target)
            if module in others and module != name:
                out.append(f"{name} imports {module}.{node.attr}")
    return out


def test_no_cli_module_imports_another_ones_private_name() -> None:
    """The command line's modules share through named helpers (``paohuzi.cli.errors``,
    ``text_table``, ``recording``, ``locks``, ``options``, ``tabular`` …) or the library
    (``replay.record.simulation``): none imports a ``_private`` name of another module of
    ``paohuzi/cli``."""
    modules = _modules()
    cli = {n for n in modules if n == "paohuzi.cli" or n.startswith("paohuzi.cli.")}
    bad = [
        use
        for name in sorted(cli)
        for use in _private_uses(
            name,
            modules[name].read_text(encoding="utf-8"),
            cli,
            modules[name].name == "__init__.py",
        )
    ]
    assert not bad, "\n".join(bad)


def test_the_private_name_reader_sees_each_form() -> None:
    others = {"paohuzi.cli.simulate", "paohuzi.cli.tune", "paohuzi.cli.runs"}
    source = (
        "from paohuzi.cli.simulate import _input_error, record_run\n"
        "from paohuzi.cli import tune as t\n"
        "import paohuzi.cli.runs\n"
        "from .simulate import _catalog_warning\n"
        "t._locked(out)\n"
        "paohuzi.cli.runs._table([], [])\n"
        "t.command_line(ctx), t.__name__\n"
        "LAZY = {'x': 'paohuzi.cli.tune:_hidden', 'y': 'paohuzi.cli.tune:tune'}\n"
    )
    assert sorted(_private_uses("paohuzi.cli.sweep", source, others)) == [
        "paohuzi.cli.sweep imports paohuzi.cli.runs._table",
        "paohuzi.cli.sweep imports paohuzi.cli.simulate._catalog_warning",
        "paohuzi.cli.sweep imports paohuzi.cli.simulate._input_error",
        "paohuzi.cli.sweep imports paohuzi.cli.tune._hidden",
        "paohuzi.cli.sweep imports paohuzi.cli.tune._locked",
    ]
    # a module's own private names are its own
    assert _private_uses("paohuzi.cli.tune", "from paohuzi.cli.tune import _x", others) == []
