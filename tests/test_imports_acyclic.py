"""No module of src/ imports itself back through others — counting the imports under `if TYPE_CHECKING:` and those
inside functions, which the run-time check in test_architecture.py leaves out: a circle there still ties the modules
into one, and it is one refactoring away from a run-time import error."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules(src: Path) -> dict[str, Path]:
    found = {}
    for path in src.rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(module: str, path: Path, modules: Mapping[str, Path]) -> Iterator[str]:
    """Every module of `modules` that `module` imports, wherever the import statement stands."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def known(name: str) -> str | None:  # `a.b.c` → the deepest module of src/ it names (a.b when c is a function)
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            names = [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            target = known(name)
            if target is not None and target != module and not module.startswith(f"{target}."):
                yield target


def import_graph(src: Path) -> dict[str, set[str]]:
    modules = _modules(src)
    return {module: set(_imported(module, path, modules)) for module, path in modules.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import one another in a circle (Tarjan's strongly connected components, iterative),
    as one circle through the group: `a → b → … → a`."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    return [_circle(graph, group) for group in groups]


def _circle(graph: Mapping[str, set[str]], group: set[str]) -> list[str]:
    """One circle through `group`: from its first module, the shortest way back to it."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & group):
                if child == start:
                    return [*paths[node], start]
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    following.append(child)
        frontier = following
    return sorted(group)


def test_no_import_circle_in_src_even_behind_type_checking() -> None:
    found = [" → ".join(circle) for circle in cycles(import_graph(SRC))]
    assert found == [], "import circles:\n" + "\n".join(found)


def test_a_circle_behind_type_checking_is_found_and_named(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import B\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\nB = 1\n")
    (pkg / "c.py").write_text("def f():\n    from pkg.a import thing\n")
    (pkg / "d.py").write_text("import pkg.a\n")  # imports into the circle, is not part of it
    assert cycles(import_graph(tmp_path)) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
