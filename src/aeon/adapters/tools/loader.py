"""Load user tools: import modules by dotted name or .py path and register every `@tool` function they expose."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Iterable, Sequence
from importlib.machinery import PathFinder
from pathlib import Path
from types import ModuleType

from aeon.adapters.tools.decorator import ToolDefinition, build_definition, tool_definition, tool_options
from aeon.adapters.tools.registry import ToolRegistry
from aeon.adapters.tools.toolset import Toolset
from aeon.adapters.tools.untrusted import DidNotFinish, LeftEarly, run_untrusted
from aeon.application.errors import ToolRegistrationError
from aeon.domain.tools import ToolSpec

DEFAULT_IMPORT_TIMEOUT = 30.0


def load_tool_modules(
    registry: ToolRegistry,
    modules: Iterable[str],
    *,
    search: Sequence[Path] = (),
    import_timeout: float | None = DEFAULT_IMPORT_TIMEOUT,
) -> list[ToolSpec]:
    """Import each module and register its `@tool` functions and module-level Toolset instances, in order.

    An entry is a dotted module name ("mytools", "mypkg.tools") or a path to a .py file. A name is looked for in
    the `search` folders first (the config file's folder, then the working directory), then on the import path; a
    relative .py path is resolved against the same folders. A Toolset class is not instantiated: the module creates
    the instance (`files = Files()`), so it decides how. A tool or toolset reachable from several listed modules (a
    package re-exporting a submodule's tools) is registered once. Raises ToolRegistrationError when a module cannot
    be found or imported, defines no tool, or a tool is invalid or clashes with one already registered.
    A module's top level is the user's code, run with the user's rights: it may not end the process, print on
    stdout or take longer than `import_timeout` seconds to import. Their outputs are untrusted data unless a tool
    says `@tool(trusted=True)`.
    """
    seen: set[int] = set()
    loaded: list[ToolSpec] = []
    for entry in modules:
        loaded.extend(_register_module(registry, _import(entry, search, import_timeout), entry, seen))
    return [registry.distrust_undeclared(spec.name) for spec in loaded]  # a module's tools read the outside world


def register_tools(
    registry: ToolRegistry,
    tools: Iterable[object],
    *,
    search: Sequence[Path] = (),
    import_timeout: float | None = DEFAULT_IMPORT_TIMEOUT,
) -> list[ToolSpec]:
    """Register the tools a program hands over, in order: functions (and bound methods, partials, callable objects),
    Toolset instances, modules (their tools, as `load_tool_modules` finds them) and `tools.modules` entries (a name or
    a .py path). A function need not be marked `@tool`: handed over, it is one, derived the same way from its type
    hints and docstring (`@tool(...)` adds options). Raises ToolRegistrationError naming anything else, or a tool
    that is invalid or clashes with one registered."""
    seen: set[int] = set()
    loaded: list[ToolSpec] = []
    for item in tools:
        if isinstance(item, Toolset):
            loaded.extend(registry.register_toolset(item))
        elif isinstance(item, ModuleType):
            loaded.extend(_register_module(registry, item, item.__name__, seen))
        elif isinstance(item, str):
            loaded.extend(load_tool_modules(registry, [item], search=search, import_timeout=import_timeout))
        elif callable(item) and not isinstance(item, type):
            marked = tool_definition(item) is not None or tool_options(item) is not None
            # unmarked: the tool `@tool` would make of it, the function left as it is
            loaded.append(
                registry.register_function(item) if marked else registry.register_definition(build_definition(item))
            )
        else:
            what = f"class {item.__name__}" if isinstance(item, type) else f"{type(item).__name__} {item!r:.60}"
            raise ToolRegistrationError(
                f"{what} is not a tool: pass functions (typed, with a docstring), Toolset instances (not classes) "
                "or modules"
            )
    return loaded


def _register_module(registry: ToolRegistry, module: ModuleType, entry: str, seen: set[int]) -> list[ToolSpec]:
    members = _tools_in(module)
    if not members:
        raise ToolRegistrationError(
            f"tools module {entry!r} defines no @tool function and no Toolset instance "
            "(a Toolset class needs a module-level instance, e.g. files = Files())"
        )
    loaded: list[ToolSpec] = []
    for member in members:
        if id(member) in seen:
            continue
        seen.add(id(member))
        if isinstance(member, Toolset):
            loaded.extend(registry.register_toolset(member))
        else:
            loaded.append(registry.register_function(member.fn))
    return loaded


def _import(entry: str, search: Sequence[Path], timeout: float | None = DEFAULT_IMPORT_TIMEOUT) -> ModuleType:
    """The module, imported as the untrusted code it is (see run_untrusted): what it prints goes to stderr, and
    sys.exit(), a KeyboardInterrupt or an import past `timeout` seconds is a ToolRegistrationError naming it."""
    try:
        return run_untrusted(lambda: _find_and_import(entry, search), timeout=timeout, name=entry)
    except ToolRegistrationError:
        raise
    except DidNotFinish as exc:
        raise ToolRegistrationError(
            f"tools module {entry!r} did not finish importing within {exc.seconds:g} s (tools.import_timeout, or "
            "run.max_seconds when smaller); an import cannot be stopped, so Aeon stops here"
        ) from None
    except LeftEarly as exc:
        raise ToolRegistrationError(f"cannot import tools module {entry!r}: its top level {exc}") from None
    except Exception as exc:
        # Any failure while running the module's top level (missing module, syntax error, a bad @tool) lands here.
        missing = isinstance(exc, ModuleNotFoundError) and exc.name == entry.partition(".")[0]
        where = f" (looked in {', '.join(map(str, search))}, then the import path)" if missing and search else ""
        raise ToolRegistrationError(
            f"cannot import tools module {entry!r}{where}: {type(exc).__name__}: {exc}"
        ) from exc


def _find_and_import(entry: str, search: Sequence[Path]) -> ModuleType:
    if entry.endswith(".py") or "/" in entry or "\\" in entry:
        return _import_file(entry, search)
    top = entry.partition(".")[0]
    if top not in sys.modules:
        for folder in search:
            spec = PathFinder.find_spec(top, [str(folder)])
            if spec is not None:
                _execute(top, spec, folder)
                break
    return importlib.import_module(entry)


def _import_file(entry: str, search: Sequence[Path]) -> ModuleType:
    given = Path(entry).expanduser()
    candidates = [given] if given.is_absolute() else [folder / given for folder in search] or [given]
    path = next((c.resolve() for c in candidates if c.is_file()), None)
    if path is None:
        raise ToolRegistrationError(
            f"tools module file {entry!r} not found (looked in {', '.join(str(c.parent) for c in candidates)})"
        )
    name = path.stem
    existing = sys.modules.get(name)
    if existing is not None:
        if getattr(existing, "__file__", None) == str(path):
            return existing
        raise ToolRegistrationError(
            f"tools module file {path}: a different module named {name!r} is already imported "
            f"(from {getattr(existing, '__file__', None) or 'a built-in'}); rename the file"
        )
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise ToolRegistrationError(f"tools module file {path} cannot be imported")
    return _execute(name, spec, path.parent)


def _execute(name: str, spec: importlib.machinery.ModuleSpec, folder: Path) -> ModuleType:
    """Run a module found outside the import path; its folder joins the end of sys.path so sibling imports work."""
    if spec.loader is None:
        raise ImportError(f"no loader for {name!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _tools_in(module: ModuleType) -> list[ToolDefinition | Toolset]:
    """The module's tools, in order. Raises ToolRegistrationError for anything marked `@tool` that would not become
    one, naming it and saying why, so that no decorated object is ever dropped without a word."""
    found: list[ToolDefinition | Toolset] = []
    classes: dict[str, type] = {}
    for name, value in vars(module).items():
        if isinstance(value, type):
            if value.__module__ == module.__name__ and (_tool_methods(value) or issubclass(value, Toolset)):
                classes[name] = value
            continue
        member = value if isinstance(value, Toolset) else _definition(value, module.__name__, name)
        if member is not None and all(member is not other for other in found):
            found.append(member)
    for name, cls in classes.items():
        if not any(_comes_from(member, cls) for member in found):
            raise ToolRegistrationError(f"tools module {module.__name__!r}: {_unregistered(name, cls)}")
    return found


def _definition(value: object, module: str, name: str) -> ToolDefinition | None:
    definition = tool_definition(value)
    options = tool_options(value)
    if definition is not None or options is None:
        return definition
    if inspect.ismethod(value):  # an instance's method marked in its class body: a tool of that instance
        return build_definition(value, options)
    raise ToolRegistrationError(
        f"tools module {module!r}: {name!r} is marked @tool as a method of a class, so it has no tool of its own; "
        "register an instance's bound method (tool(obj.method)) or a Toolset instance"
    )


def _tool_methods(cls: type) -> list[str]:
    return [name for name, value in vars(cls).items() if tool_options(value) is not None]


def _comes_from(member: ToolDefinition | Toolset, cls: type) -> bool:
    if isinstance(member, Toolset):
        return isinstance(member, cls)
    return isinstance(getattr(inspect.unwrap(member.fn), "__self__", None), cls)


def _unregistered(name: str, cls: type) -> str:
    marked = ", ".join(_tool_methods(cls)) or "its public methods"
    if issubclass(cls, Toolset):
        return (
            f"Toolset class {name!r} needs a module-level instance (e.g. {name.lower()} = {name}()), "
            f"or {marked} are not tools"
        )
    return (
        f"class {name!r} marks {marked} with @tool, but only a Toolset instance or a bound method registers; "
        f"subclass aeon.adapters.tools.Toolset and create an instance at module level"
    )
