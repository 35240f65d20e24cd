"""The package's shape: no module imports itself back through others, and the application is split into rooms."""

from __future__ import annotations

import ast
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
    assert (application / "runs" / "use_case.py").is_file()  # the run use case, above the rooms (the layers' top)
    # the floor every room and every adapter may stand on (pyproject.toml's layers contract orders the rooms)
    assert loose == [
        "access",  # who may reach an HTTP door (aeon ui's guard, any HTTP door's)
        "approval_args",  # what a person gives with a decision, read alike by aeon approve and aeon ui
        "errors",
        "json_text",
        "policy",
        "ports",
        "recorder",
        "redaction",
        "results",
        "schemas",
        "settings_section",
        "threads",  # what a run of a thread is given and leaves there (the run use case and a durable run's end)
        "tracing",
    ]
    rooms = sorted(p.name for p in application.iterdir() if (p / "__init__.py").is_file())
    assert rooms == ["judges", "kernel", "llm", "plans", "runs", "views"]
    durable = ROOT / "src" / "aeon" / "entrypoints"
    assert not list(durable.glob("durable_*.py")) and (durable / "durable" / "__init__.py").is_file()


_APPLICATION = ROOT / "src" / "aeon" / "application"
# The composition points: they build a Run and hand each part the narrow view it may touch.
_HOLDS_THE_WHOLE_RUN = {"kernel/orchestrator.py", "kernel/wiring.py", "kernel/outcome.py", "kernel/run.py"}


def _annotations(tree: ast.AST) -> list[str]:
    found: list[ast.expr | None] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign):
            found.append(node.annotation)
    return [ast.unparse(a) for a in found if a is not None]


def test_stages_and_services_take_a_narrow_view_of_the_run_not_the_whole_run() -> None:
    """Each stage and service names what it may touch (StageRun, ExecutingRun, ToolTurn, CallingRun …): only the
    composition points hold the whole Run."""
    offenders = []
    for path in sorted(_APPLICATION.rglob("*.py")):
        where = path.relative_to(_APPLICATION).as_posix()
        if where in _HOLDS_THE_WHOLE_RUN:
            continue
        if "Run" in _annotations(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(where)
    assert offenders == []


_MUTATORS = ("append", "extend", "add", "update", "pop", "clear", "insert")


def _state_changes(tree: ast.AST) -> list[str]:
    """`x.state.field = …`, `x.state.field += …` and `x.state.field.append(…)`-style changes made from outside
    RunState's own methods."""

    def through_state(node: ast.expr) -> bool:
        while isinstance(node, ast.Attribute):
            if node.attr in ("state", "_state"):
                return True
            node = node.value
        return isinstance(node, ast.Name) and node.id in ("state", "s")

    changed: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            changed += [t for t in node.targets if isinstance(t, ast.Attribute) and through_state(t.value)]
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
            changed += [node.target] if through_state(node.target.value) else []
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            changed += [node.func.value] if through_state(node.func.value) else []
    return [ast.unparse(c) for c in changed]


def test_run_state_is_changed_only_through_its_named_methods() -> None:
    """The run state is one record; the loop changes it through methods named by what they record (profiled,
    planned, llm_called, fell_back …), and the recorder through its records — never field by field elsewhere."""
    changes = {}
    for path in sorted(_APPLICATION.rglob("*.py")):
        where = path.relative_to(_APPLICATION).as_posix()
        if where == "recorder.py":  # warn / tool_call / advisory: the records themselves
            continue
        if found := _state_changes(ast.parse(path.read_text(encoding="utf-8"))):
            changes[where] = found
    assert changes == {}


# -- issue 29's size rules: a newcomer reads a module in one sitting and a function on one screen ----------------------

_SRC = ROOT / "src"
MOST_ENTRYPOINT_LINES = 4_000
MOST_MODULE_LINES = 300
MOST_FUNCTION_LINES = 50  # from `def` to its last line, docstring included, decorators not


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def long_modules(root: Path, most: int = MOST_MODULE_LINES) -> list[str]:
    """`path: N lines` for each module under `root` longer than `most` lines."""
    found = ((path, _lines(path)) for path in sorted(root.rglob("*.py")))
    return [f"{path.relative_to(root).as_posix()}: {n} lines" for path, n in found if n > most]


def long_functions(root: Path, most: int = MOST_FUNCTION_LINES) -> list[str]:
    """`path:line name: N lines` for each function or method (nested ones too) under `root` longer than `most`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > most:
                    found.append(f"{path.relative_to(root).as_posix()}:{node.lineno} {node.name}: {n} lines")
    return found


def test_the_size_checks_name_each_long_module_and_function_with_its_length(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(50))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "big.py").write_text(f"def long():\n{body}\n\n\ndef short():\n    return 1\n" + "\n" * 250)
    (tmp_path / "pkg" / "small.py").write_text("class A:\n    async def fine(self):\n        return 1\n")

    assert long_functions(tmp_path) == ["pkg/big.py:1 long: 51 lines"]
    assert long_modules(tmp_path) == ["pkg/big.py: 305 lines"]


def test_entrypoints_hold_at_most_4000_lines() -> None:
    entrypoints = _SRC / "aeon" / "entrypoints"
    sizes = {p.relative_to(entrypoints).as_posix(): _lines(p) for p in sorted(entrypoints.rglob("*.py"))}
    largest = ", ".join(f"{name} {n}" for name, n in sorted(sizes.items(), key=lambda item: -item[1])[:5])
    total = sum(sizes.values())
    assert total <= MOST_ENTRYPOINT_LINES, f"src/aeon/entrypoints holds {total} lines; the largest: {largest}"


def test_no_module_in_src_is_over_300_lines() -> None:
    found = long_modules(_SRC)
    assert not found, "modules over 300 lines:\n" + "\n".join(found)


def test_no_function_in_src_is_over_50_lines() -> None:
    found = long_functions(_SRC)
    assert not found, "functions over 50 lines:\n" + "\n".join(found)
