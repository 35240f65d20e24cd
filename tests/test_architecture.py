"""The package's shape: no module imports itself back through others, and the application is split into rooms."""

from __future__ import annotations

from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def _cycles(graph: grimp.ImportGraph) -> list[set[str]]:
    """The groups of modules that import each other in a circle (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph.find_modules_directly_imported_by(module):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(group)

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_itself_back_at_run_time() -> None:
    graph = grimp.build_graph("aeon", exclude_type_checking_imports=True)
    assert _cycles(graph) == []


def test_application_modules_live_in_named_rooms_not_one_flat_hall() -> None:
    application = ROOT / "src" / "aeon" / "application"
    loose = sorted(p.stem for p in application.glob("*.py") if p.stem != "__init__")
    assert loose == ["errors", "ports", "redaction"]  # what every room shares
    rooms = sorted(p.name for p in application.iterdir() if (p / "__init__.py").is_file())
    assert rooms == ["judges", "kernel", "llm", "plans"]
    durable = ROOT / "src" / "aeon" / "entrypoints"
    assert not list(durable.glob("durable_*.py")) and (durable / "durable" / "__init__.py").is_file()
