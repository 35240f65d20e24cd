"""The durable side of the Python API: whether a run can be rebuilt in another process, and its tools as the modules
that process imports."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from aeon.adapters.tools.toolset import Toolset
from aeon.application.errors import UsageError


def listed(tools: Iterable[object]) -> list[object]:
    if isinstance(tools, str | ModuleType | Toolset) or callable(tools) or not isinstance(tools, Iterable):
        raise UsageError(f"tools takes a list (tools=[{getattr(tools, '__name__', 'weather')}]), not one tool")
    return list(tools)


def rebuildable(tools: Iterable[object], model: object) -> bool:
    """Whether another process can load the run's tools (modules, or their names) and its model (named) again."""
    named = (t.__name__ if isinstance(t, ModuleType) else t for t in tools)
    return (model is None or isinstance(model, str)) and all(isinstance(n, str) and n != "__main__" for n in named)


def module_names(tools: Iterable[object]) -> list[str]:
    """The tools of a durable run as tools.modules entries, which any process that finishes the run imports."""
    names = []
    for item in tools:
        name = item.__name__ if isinstance(item, ModuleType) else item
        if not isinstance(name, str) or name == "__main__":
            raise UsageError(
                f"a durable run is finished by whatever process resumes it, which imports its tools again: give them "
                f"as modules it can import by name (or tools.modules entries), not {item!r:.60}"
            )
        names.append(name)
    return names
