"""ToolRegistry checks contracts at registration and turns every tool failure into a ToolResult error."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import msgspec
import pytest
from pydantic import BaseModel

from aeon.adapters.tools import ToolRegistry, tool
from aeon.adapters.tools.builtin import builtin_tools
from aeon.application.errors import ToolNotFound, ToolRegistrationError
from aeon.application.ports import ToolPort
from aeon.domain.tools import ToolResult, ToolSpec

OBJECT = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


class Box(BaseModel):
    width: int
    height: int


class Area(BaseModel):
    value: int
    unit: str = "cm2"


class Pair(msgspec.Struct):
    left: int
    right: int


@tool
def area(box: Box) -> Area:
    """Area of a box."""
    return Area(value=box.width * box.height)


@tool
def explode(reason: str) -> str:
    """Always fail."""
    raise ValueError(reason)


@tool
async def slow_add(a: int, b: int = 1) -> int:
    """Add asynchronously."""
    await asyncio.sleep(0)
    return a + b


def spec(name: str = "t", **overrides: Any) -> ToolSpec:
    fields: dict[str, Any] = {"name": name, "description": "A tool.", "input_schema": OBJECT, "output_schema": {}}
    fields.update(overrides)
    return ToolSpec(**fields)


def invoke(registry: ToolRegistry, name: str, args: dict[str, Any]) -> ToolResult:
    return asyncio.run(registry.invoke(name, args))


def test_registry_satisfies_the_tool_port() -> None:
    registry: ToolPort = ToolRegistry()
    assert isinstance(registry, ToolPort)


def test_list_and_get_return_registered_specs_in_order() -> None:
    registry = ToolRegistry()
    first = registry.register_function(area)
    registry.register(spec("plain"), lambda x: x)
    assert [s.name for s in registry.list()] == ["area", "plain"]
    assert registry.get("area") == first
    assert registry.get("nope") is None


def test_pydantic_argument_is_validated_and_pydantic_result_is_dumped_to_json_data() -> None:
    registry = ToolRegistry()
    registry.register_function(area)
    result = invoke(registry, "area", {"box": {"width": 3, "height": 4}})
    assert result == ToolResult(output={"value": 12, "unit": "cm2"})


def test_async_tool_is_awaited_and_defaults_apply() -> None:
    registry = ToolRegistry()
    registry.register_function(slow_add)
    assert invoke(registry, "slow_add", {"a": 2}).output == 3


@tool(inline=True)
def where_am_i() -> str:
    """Name the thread it runs on."""
    return threading.current_thread().name


@tool(inline=True, timeout=0.05)
def hands_back_a_wait(seconds: float) -> Any:
    """Inline, but what it returns is a coroutine to await."""
    return asyncio.sleep(seconds, result="waited")


@tool
def hands_back_a_wait_from_its_thread() -> Any:
    """Runs on a daemon thread; what it returns is a coroutine to await."""
    return asyncio.sleep(0, result=threading.current_thread().name)


def test_an_awaitable_returned_by_a_sync_tool_on_its_thread_is_awaited_for_its_result() -> None:
    registry = ToolRegistry()
    registry.register_function(hands_back_a_wait_from_its_thread)
    output = invoke(registry, "hands_back_a_wait_from_its_thread", {}).output
    assert output == "aeon-tool-hands_back_a_wait_from_its_thread"  # the awaited result, made on the tool's thread


def test_an_inline_tool_runs_on_the_event_loop_thread_not_a_daemon_thread() -> None:
    registry = ToolRegistry()
    registry.register_function(where_am_i)
    assert invoke(registry, "where_am_i", {}).output == threading.current_thread().name


def test_an_awaitable_from_an_inline_tool_is_awaited_within_the_tool_timeout() -> None:
    registry = ToolRegistry()
    registry.register_function(hands_back_a_wait)
    assert invoke(registry, "hands_back_a_wait", {"seconds": 0}).output == "waited"
    late = invoke(registry, "hands_back_a_wait", {"seconds": 5})
    assert late.error == "TimeoutError: did not finish within 0.05 s (its timeout); abandoned"
    assert not late.cut_at_time_left  # the tool's own limit: its step fails and the run goes on


def test_a_call_cut_at_the_callers_time_left_says_so_as_a_flag_not_only_in_its_text() -> None:
    registry = ToolRegistry()
    registry.register_function(hands_back_a_wait)
    cut = asyncio.run(registry.invoke("hands_back_a_wait", {"seconds": 5}, time_left=0.01))
    assert cut.error == "TimeoutError: did not finish within 0.01 s (the run's time cap); abandoned"
    assert cut.cut_at_time_left  # the run's time is up: the caller ends the run


def test_tool_exception_becomes_an_error_result_and_never_propagates() -> None:
    registry = ToolRegistry()
    registry.register_function(explode)
    result = invoke(registry, "explode", {"reason": "bad input"})
    assert not result.ok
    assert result.error == "ValueError: bad input"


class Leaving(BaseException):
    """Neither an Exception nor a way out Python knows: a library's own BaseException."""


def _raise(what: BaseException) -> Any:
    raise what


LEAVING = [
    (lambda: sys.exit(0), "SystemExit: the tool called sys.exit(0)"),
    (lambda: sys.exit("usage: tool [-h]"), "SystemExit: the tool called sys.exit('usage: tool [-h]')"),
    (lambda: _raise(KeyboardInterrupt()), "KeyboardInterrupt: raised by the tool"),
    (lambda: _raise(Leaving("bye\nnow")), "Leaving: raised by the tool: bye now"),
    (lambda: _raise(asyncio.CancelledError()), "CancelledError: raised by the tool"),
]


@pytest.mark.parametrize(("leave", "error"), LEAVING)
def test_a_sync_tool_that_tries_to_end_the_process_fails_its_call_with_one_line_saying_what_it_raised(
    leave: Any, error: str
) -> None:
    registry = ToolRegistry()
    registry.register(spec("leaves"), lambda x: leave())
    result = invoke(registry, "leaves", {"x": 1})
    assert (result.output, result.error) == (None, error)


@pytest.mark.parametrize(("leave", "error"), LEAVING[:4])
@pytest.mark.parametrize("kind", ["async", "inline"])
def test_an_async_or_inline_tool_that_tries_to_end_the_process_fails_its_call_too(
    leave: Any, error: str, kind: str
) -> None:
    async def leaves_async(x: int) -> str:
        """Leave, asynchronously."""
        await asyncio.sleep(0)
        return str(leave())

    def leaves_inline(x: int) -> str:
        """Leave, on the event loop."""
        return str(leave())

    registry = ToolRegistry()
    registry.register_function(tool(leaves_async) if kind == "async" else tool(inline=True)(leaves_inline))
    result = invoke(registry, f"leaves_{kind}", {"x": 1})
    assert result.error == error


def test_cancelling_the_caller_while_a_tool_runs_still_cancels_it_a_real_ctrl_c_is_not_the_tools() -> None:
    registry = ToolRegistry()
    registry.register_function(slow_add)
    registry.register(spec("sleeper"), lambda x: threading.Event().wait(5))

    async def main(name: str, args: dict[str, Any]) -> None:
        call = asyncio.ensure_future(registry.invoke(name, args))
        await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(main("sleeper", {"x": 1}))  # a sync tool on its thread

    async def never(a: int, b: int = 1) -> int:
        """Wait forever."""
        await asyncio.Event().wait()
        return a

    registry.register_function(tool(name="never")(never))
    asyncio.run(main("never", {"a": 1}))  # an async tool on the loop


def test_invalid_arguments_become_a_one_line_validation_error_result() -> None:
    registry = ToolRegistry()
    registry.register_function(slow_add)
    result = invoke(registry, "slow_add", {"a": "seven", "c": 1})
    assert result.error is not None
    assert result.error.startswith("ValidationError: a: ")
    assert "c: Extra inputs are not permitted" in result.error
    assert "\n" not in result.error


def test_plain_registered_callable_receives_the_arguments_as_given() -> None:
    registry = ToolRegistry()
    registry.register(spec("pair"), lambda x: Pair(left=x, right=-x))
    assert invoke(registry, "pair", {"x": 5}).output == {"left": 5, "right": -5}


def test_output_that_is_not_json_data_is_kept_as_its_text_and_listed_as_converted() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque#1"

    registry = ToolRegistry()
    registry.register(spec("opaque"), lambda x: [x, Opaque()])
    result = invoke(registry, "opaque", {"x": 1})
    assert result.ok
    assert result.output == [1, "opaque#1"]
    assert [(c.path, c.type, c.number) for c in result.converted] == [([1], "Opaque", False)]


def test_unknown_tool_raises_tool_not_found_naming_the_registered_ones() -> None:
    registry = ToolRegistry()
    registry.register_function(area)
    with pytest.raises(ToolNotFound, match=r"unknown tool 'missing' \(registered: area\)"):
        invoke(registry, "missing", {})


def test_duplicate_name_is_rejected() -> None:
    registry = ToolRegistry()
    registry.register_function(area)
    with pytest.raises(ToolRegistrationError, match=r"^tool 'area': a tool with this name is already registered$"):
        registry.register(spec("area"), lambda x: x)


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"input_schema": {"type": "objekt"}}, "input_schema is not a valid JSON schema"),
        ({"input_schema": {"type": "object", "required": "x"}}, "input_schema is not a valid JSON schema"),
        ({"input_schema": {"type": "string"}}, 'input_schema must describe an object \\("type": "object"\\)'),
        ({"input_schema": []}, "input_schema must be a JSON object, got list"),
        ({"output_schema": {"minimum": "zero"}}, "output_schema is not a valid JSON schema"),
        ({"example": {"x": "one"}}, "example does not match input_schema: 'one' is not of type 'integer'"),
        ({"name": "has space"}, "name must be 1-64 characters"),
        ({"name": ""}, "name must be 1-64 characters"),
    ],
)
def test_malformed_specs_raise_a_one_line_error_naming_tool_and_problem(
    overrides: dict[str, Any], problem: str
) -> None:
    bad = spec(**overrides)
    with pytest.raises(ToolRegistrationError, match=problem) as caught:
        ToolRegistry().register(bad, lambda x: x)
    assert str(caught.value).startswith(f"tool {bad.name!r}: ")
    assert "\n" not in str(caught.value)


def test_failed_registration_leaves_the_registry_unchanged() -> None:
    registry = ToolRegistry()
    with pytest.raises(ToolRegistrationError):
        registry.register(spec(input_schema={"type": "string"}), lambda x: x)
    assert registry.list() == []


def test_non_callable_and_undecorated_functions_are_rejected() -> None:
    registry = ToolRegistry()
    with pytest.raises(ToolRegistrationError, match="is not callable"):
        registry.register(spec(), 42)  # type: ignore[arg-type]

    def plain(x: int) -> int:
        return x

    with pytest.raises(ToolRegistrationError, match=r"^tool 'plain': not decorated with @tool$"):
        registry.register_function(plain)


def test_the_built_in_tools_pass_every_check_their_vetted_registration_skips() -> None:
    registry = ToolRegistry()
    for fn in builtin_tools():
        registry.register_function(fn)  # not vetted: schemas against the metaschema, example against its schema

    assert [spec.name for spec in registry.list()] == ["echo", "calculator"]
