"""McpTools against real servers: mcp-server-time over stdio, and a server built with the SDK over stdio and over
streamable HTTP on 127.0.0.1. Every call bounded, every failure a ToolResult naming the server, no process left."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from aeon.adapters.tools.mcp import McpServerConfig, McpTools
from aeon.application.errors import ConfigurationError
from aeon.application.redaction import Redactor
from aeon.domain.tools import ToolResult

from mcp_harness import http_server, new_tag, processes_with, stdio_args, time_server

TOKEN = "test-bearer-token-0123456789"


def call(tools: McpTools, name: str, args: dict[str, Any] | None = None, **kw: Any) -> ToolResult:
    return asyncio.run(tools.invoke(name, args or {}, **kw))


@pytest.fixture(scope="module")
def time_tools() -> Iterator[McpTools]:
    tools = McpTools([time_server(prefix="time_")])
    tools.start()
    yield tools
    tools.close()


@pytest.fixture(scope="module")
def test_tools() -> Iterator[tuple[McpTools, list[str]]]:
    tag = new_tag()
    warnings: list[str] = []
    config = McpServerConfig(name="test", command=sys.executable, args=tuple(stdio_args(tag)), timeout=5)
    tools = McpTools([config], warn=warnings.append)
    tools.start()
    yield tools, warnings
    tools.close()
    assert processes_with(tag) == []


# -- mcp-server-time (PyPI), over stdio ------------------------------------------------------------------------------
def test_time_server_tools_are_listed_with_their_server_and_annotations(time_tools: McpTools) -> None:
    specs = {s.name: s for s in time_tools.list()}

    assert set(specs) == {"time_get_current_time", "time_convert_time"}
    now = specs["time_get_current_time"]
    assert now.server == "time" and now.input_schema["required"] == ["timezone"]
    assert now.output_schema["required"] == ["timezone", "datetime", "day_of_week", "is_dst"]
    # the server says readOnlyHint: safe to run again on resume, nothing to approve
    assert all(s.idempotent and not s.requires_approval for s in specs.values())


def test_a_time_server_call_answers_its_structured_content(time_tools: McpTools) -> None:
    result = call(time_tools, "time_get_current_time", {"timezone": "Asia/Tokyo"})
    assert result.ok and result.output["timezone"] == "Asia/Tokyo" and result.output["datetime"].endswith("+09:00")


def test_an_is_error_answer_is_a_step_error_naming_the_server(time_tools: McpTools) -> None:
    result = call(time_tools, "time_get_current_time", {"timezone": "Nowhere/Atlantis"})
    assert not result.ok and result.error.startswith("MCP server 'time' reported an error: ")
    assert "Invalid timezone" in result.error


# -- the SDK-built server over stdio --------------------------------------------------------------------------------
def test_a_tool_aeon_cannot_name_is_skipped_with_a_warning(test_tools: tuple[McpTools, list[str]]) -> None:
    tools, warnings = test_tools
    assert "bad.name" not in {s.name for s in tools.list()}
    assert warnings == [
        "MCP server 'test': skipped tool 'bad.name': name must be 1-64 characters of letters, digits, '_' or '-'"
    ]


def test_annotations_become_flags(test_tools: tuple[McpTools, list[str]]) -> None:
    tools, _ = test_tools
    flags = {s.name: (s.idempotent, s.requires_approval) for s in tools.list()}
    assert flags["add"] == (True, False)  # readOnlyHint
    assert flags["delete_things"] == (False, True)  # destructiveHint
    assert flags["upsert"] == (True, False)  # idempotentHint, destructiveHint false
    assert flags["plain"] == (False, True)  # no annotations: the spec's defaults


def test_arguments_failing_the_input_schema_are_refused_before_the_call(test_tools: tuple[McpTools, list[str]]) -> None:
    tools, _ = test_tools
    before = call(tools, "tally").output

    refused = call(tools, "add", {"a": "two", "b": 3})

    assert refused.error == "ValidationError: a: expected integer, got string 'two'"
    assert call(tools, "tally").output == before  # the server never saw it
    assert call(tools, "add", {"a": 2, "b": 3}).output == {"result": 5}
    assert call(tools, "tally").output == {"result": before["result"] + 1}


def test_an_image_is_recorded_by_type_size_and_hash(test_tools: tuple[McpTools, list[str]]) -> None:
    tools, _ = test_tools
    image, caption = call(tools, "picture").output
    assert image["type"] == "image" and image["mime_type"] == "image/png" and image["bytes"] == 70
    assert len(image["sha256"]) == 64 and "data" not in image
    assert caption == {"type": "text", "text": "a tiny picture"}
    blob, text = call(tools, "blob").output
    assert blob["uri"] == "file:///data.bin" and blob["bytes"] == 3 and text["text"] == "three bytes"


def test_an_error_answer_names_the_server(test_tools: tuple[McpTools, list[str]]) -> None:
    tools, _ = test_tools
    result = call(tools, "refuse", {"reason": "not today"})
    assert result.error == "MCP server 'test' reported an error: Error executing tool refuse: refused: not today"


def test_a_call_past_its_timeout_is_abandoned_at_once_and_the_server_goes_on(
    test_tools: tuple[McpTools, list[str]],
) -> None:
    tools, _ = test_tools
    started = time.monotonic()
    slow = call(tools, "slow", {"seconds": 2}, time_left=0.5)
    took = time.monotonic() - started

    assert took < 2.0 and slow.cut_at_time_left
    assert (
        slow.error == "TimeoutError: MCP server 'test' did not answer within 0.5 s (the run's time cap); call cancelled"
    )
    assert call(tools, "shout", {"text": "still here"}).output == {"result": "STILL HERE"}


def test_a_50_mib_answer_is_refused_at_the_cap_and_the_next_call_answers(
    test_tools: tuple[McpTools, list[str]],
) -> None:
    tools, _ = test_tools  # the server's timeout is 5 s
    started = time.monotonic()
    huge = call(tools, "flood", {"megabytes": 50})
    took = time.monotonic() - started

    # before: the whole line was read (15-60 s), so the timeout cut the call and the next one timed out behind it
    assert huge.error == "MCP server 'test' sent a result over 4 MiB: skipped unread past that"
    assert took < 5.0, took
    assert call(tools, "add", {"a": 2, "b": 3}).output == {"result": 5}
    assert call(tools, "flood", {"megabytes": 1}).output == "x" * (1 << 20)  # under the cap: whole


def test_a_cancelled_caller_stops_waiting_at_once(test_tools: tuple[McpTools, list[str]]) -> None:
    tools, _ = test_tools

    async def cancel_soon() -> float:
        task = asyncio.create_task(tools.invoke("slow", {"seconds": 2}))
        await asyncio.sleep(0.3)
        started = time.monotonic()
        task.cancel()  # what Ctrl-C does to the run
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(cancel_soon()) < 0.5
    assert call(tools, "add", {"a": 1, "b": 1}).ok


def test_the_servers_own_timeout_bounds_a_call() -> None:
    config = McpServerConfig(name="test", command=sys.executable, args=tuple(stdio_args(new_tag())), timeout=0.5)
    tools = McpTools([config], timeout=60)
    tools.start()
    try:
        result = call(tools, "slow", {"seconds": 1.5}, time_left=30)
    finally:
        tools.close()
    assert result.error == "TimeoutError: MCP server 'test' did not answer within 0.5 s (its timeout); call cancelled"
    assert not result.cut_at_time_left


def test_a_malformed_message_then_a_crash_are_step_errors_never_a_hang() -> None:
    tag = new_tag()
    tools = McpTools([McpServerConfig(name="flaky", command=sys.executable, args=tuple(stdio_args(tag)))])
    tools.start()
    try:
        started = time.monotonic()
        garbled = call(tools, "garble", time_left=20)
        crashed = call(tools, "crash", time_left=20)
        after = call(tools, "add", {"a": 1, "b": 2}, time_left=20)
        took = time.monotonic() - started
    finally:
        tools.close()

    assert garbled.error.startswith("MCP server 'flaky' sent a malformed message: Invalid JSON")
    assert crashed.error == (
        "MCP server 'flaky' closed the connection (the server may have exited); "
        "its stderr ended: test server: crashing on purpose"
    )
    assert after.error.startswith("MCP server 'flaky' closed the connection")
    assert took < 5 and processes_with(tag) == []


# -- the SDK-built server over streamable HTTP on 127.0.0.1 ----------------------------------------------------------
def test_a_streamable_http_server_is_reached_with_its_headers() -> None:
    with http_server(TOKEN) as url:
        config = McpServerConfig(name="web", url=url, headers={"Authorization": f"Bearer {TOKEN}"}, include=("add",))
        tools = McpTools([config])
        tools.start()
        try:
            assert [(s.name, s.server) for s in tools.list()] == [("add", "web")]
            assert call(tools, "add", {"a": 20, "b": 22}).output == {"result": 42}
            assert call(tools, "add", {"a": 1}).error == "ValidationError: (root): 'b' is a required property"
        finally:
            tools.close()


def test_a_streamable_http_server_that_refuses_us_is_a_start_error_naming_it_and_no_secret() -> None:
    with http_server(TOKEN) as url:
        wrong = "wrong-token-abcdefghijkl"
        config = McpServerConfig(name="web", url=url, headers={"Authorization": f"Bearer {wrong}"}, start_timeout=10)
        tools = McpTools([config], redactor=Redactor([wrong]))
        with pytest.raises(ConfigurationError) as raised:
            tools.start()
    message = str(raised.value)
    assert message.startswith("MCP server 'web' (streamable HTTP) answered with error") and wrong not in message
    assert message.endswith("(HTTP 401 Unauthorized)")


# -- starting and stopping -------------------------------------------------------------------------------------------
def test_a_server_that_never_answers_is_a_start_error_within_its_start_timeout() -> None:
    tag = new_tag()
    silent = McpServerConfig(
        name="silent", command=sys.executable, args=("-c", "import time; time.sleep(60)", tag), start_timeout=0.5
    )
    tools = McpTools([silent])
    started = time.monotonic()
    with pytest.raises(ConfigurationError, match=r"^MCP server 'silent' \(stdio\) did not start within 0.5 s"):
        tools.start()
    assert time.monotonic() - started < 8  # the SDK's stop: stdin closed, 2 s, SIGTERM
    assert processes_with(tag) == []


def test_a_command_that_does_not_exist_is_a_start_error_naming_the_server() -> None:
    tools = McpTools([McpServerConfig(name="ghost", command="/no/such/mcp-server")])
    with pytest.raises(ConfigurationError) as raised:
        tools.start()
    assert str(raised.value) == (
        "MCP server 'ghost' (stdio) cannot run '/no/such/mcp-server': No such file or directory"
    )


def test_close_stops_every_server_and_later_calls_fail_cleanly() -> None:
    tag = new_tag()
    tools = McpTools([McpServerConfig(name="test", command=sys.executable, args=tuple(stdio_args(tag)))])
    tools.start()
    assert len(processes_with(tag)) == 1

    tools.close()
    tools.close()  # once is enough; twice is harmless

    assert processes_with(tag) == []
    assert call(tools, "add", {"a": 1, "b": 2}).error == "MCP server 'test' is not running: it was stopped"


def test_two_servers_offering_one_name_is_a_config_error_asking_for_a_prefix() -> None:
    tag = new_tag()
    one = McpServerConfig(name="one", command=sys.executable, args=tuple(stdio_args(tag)), include=("add",))
    two = McpServerConfig(name="two", command=sys.executable, args=tuple(stdio_args(tag)), include=("add",))
    with pytest.raises(ConfigurationError, match="tool 'add' is offered by MCP servers 'one' and 'two': give one"):
        McpTools([one, two]).start()
    assert processes_with(tag) == []
