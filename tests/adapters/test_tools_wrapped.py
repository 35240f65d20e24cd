"""Tools made the usual ways besides `def` (a functools.wraps wrapper, a partial, a callable object, a bound
method) register with their real signatures, and nothing marked @tool in a tools module is dropped without a word."""

from __future__ import annotations

import asyncio
import functools
import textwrap
from pathlib import Path

import pytest

from aeon.adapters.tools import ToolRegistry, load_tool_modules, tool
from aeon.application.errors import ToolRegistrationError


class Api:
    """An existing API client whose methods a user exposes as tools."""

    def __init__(self) -> None:
        self.cwd = "/"

    def cd(self, path: str) -> str:
        """Change the working folder."""
        self.cwd = path
        return self.cwd

    async def size(self, name: str, *, unit: str = "B") -> int:
        """The size of a file."""
        return len(name) * (1024 if unit == "KiB" else 1)


def expose(method):  # type: ignore[no-untyped-def]  # written the way users write it
    @functools.wraps(method)
    def call(**kw):  # type: ignore[no-untyped-def]
        return method(**kw)

    return tool(call)


def invoke(registry: ToolRegistry, name: str, args: dict[str, object]) -> object:
    result = asyncio.run(registry.invoke(name, args))
    assert result.error is None, result.error
    return result.output


def test_a_functools_wraps_wrapper_of_a_bound_method_registers_with_the_methods_signature() -> None:
    api = Api()
    registry = ToolRegistry()
    spec = registry.register_function(expose(api.cd))

    assert spec.name == "cd"
    assert spec.description == "Change the working folder."
    assert spec.input_schema["required"] == ["path"]
    assert spec.output_schema == {"type": "string"}
    assert invoke(registry, "cd", {"path": "/tmp"}) == "/tmp"
    assert api.cwd == "/tmp"


def test_a_wrapped_async_method_keeps_its_keyword_only_default() -> None:
    registry = ToolRegistry()
    spec = registry.register_function(expose(Api().size))

    assert spec.input_schema["required"] == ["name"]
    assert spec.input_schema["properties"]["unit"]["default"] == "B"
    assert invoke(registry, "size", {"name": "abcd", "unit": "KiB"}) == 4096


def test_a_partial_is_named_after_its_function_and_hides_what_it_binds() -> None:
    def scale(value: float, factor: float) -> float:
        """Scale a value."""
        return value * factor

    registry = ToolRegistry()
    spec = registry.register_function(tool(functools.partial(scale, factor=3.0)))

    assert spec.name == "scale"
    assert spec.input_schema["required"] == ["value"]
    assert spec.input_schema["properties"]["factor"]["default"] == 3.0
    assert invoke(registry, "scale", {"value": 2}) == 6.0


def test_a_callable_object_is_named_after_its_class_and_described_by_its_call() -> None:
    class Lookup:
        __slots__ = ("table",)  # takes no new attributes: the tool is carried by a forwarding function

        def __init__(self) -> None:
            self.table = {"a": 1}

        def __call__(self, key: str) -> int:
            """Look a key up."""
            return self.table[key]

    registry = ToolRegistry()
    spec = registry.register_function(tool(Lookup(), name="lookup"))

    assert spec.description == "Look a key up."
    assert spec.input_schema["required"] == ["key"]
    assert invoke(registry, "lookup", {"key": "a"}) == 1


def write_module(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_a_module_exposing_wrapped_methods_registers_every_one(tmp_path: Path) -> None:
    module = write_module(
        tmp_path,
        "wrapped_api_tools",
        """
        import functools
        from aeon.adapters.tools import tool

        class Api:
            def cd(self, path: str) -> str:
                \"\"\"Change the working folder.\"\"\"
                return "cd " + path

            def ls(self, hidden: bool = False) -> list[str]:
                \"\"\"List the folder.\"\"\"
                return [".git", "a"] if hidden else ["a"]

        api = Api()

        def expose(method):
            @functools.wraps(method)
            def call(**kw):
                return method(**kw)
            return tool(call)

        cd = expose(api.cd)
        ls = expose(api.ls)
        """,
    )
    registry = ToolRegistry()
    specs = load_tool_modules(registry, [module])

    assert [s.name for s in specs] == ["cd", "ls"]
    assert invoke(registry, "ls", {"hidden": True}) == [".git", "a"]


def test_a_bound_method_of_a_marked_method_at_module_level_is_a_tool(tmp_path: Path) -> None:
    module = write_module(
        tmp_path,
        "bound_method_tools",
        """
        from aeon.adapters.tools import tool

        class Client:
            @tool
            def shout(self, text: str) -> str:
                \"\"\"Shout a text.\"\"\"
                return text.upper()

        shout = Client().shout
        """,
    )
    registry = ToolRegistry()
    assert [s.name for s in load_tool_modules(registry, [module])] == ["shout"]
    assert invoke(registry, "shout", {"text": "hi"}) == "HI"


@pytest.mark.parametrize(
    ("source", "says"),
    [
        (
            """
            class Client:
                @tool
                def shout(self, text: str) -> str:
                    \"\"\"Shout a text.\"\"\"
                    return text.upper()
            """,
            r"class 'Client' marks shout with @tool, but only a Toolset instance or a bound method registers",
        ),
        (
            """
            class Files(Toolset):
                def read(self, path: str) -> str:
                    \"\"\"Read a file.\"\"\"
                    return path
            """,
            r"Toolset class 'Files' needs a module-level instance \(e.g. files = Files\(\)\)",
        ),
        (
            """
            class Client:
                @tool
                def shout(self, text: str) -> str:
                    \"\"\"Shout a text.\"\"\"
                    return text.upper()

            client = Client()
            shout = Client.shout
            """,
            r"'shout' is marked @tool as a method of a class, so it has no tool of its own",
        ),
    ],
    ids=["plain-class", "toolset-without-instance", "unbound-method"],
)
def test_a_marked_object_that_would_not_become_a_tool_is_an_error_naming_it(
    tmp_path: Path, source: str, says: str
) -> None:
    header = 'from aeon.adapters.tools import Toolset, tool\n\n@tool\ndef ok(x: int) -> int:\n    """Fine."""\n'
    header += "    return x\n"
    module = write_module(tmp_path, f"dropping_tools_{tmp_path.name}", header + textwrap.dedent(source))
    with pytest.raises(ToolRegistrationError, match=says):
        load_tool_modules(ToolRegistry(), [module])
