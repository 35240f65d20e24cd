"""What an MCP tool call of `aeon mcp` needs around its work in the SDK's server session: its progress relayed as
`aeon run` shows it, and a client's cancellation delivered to its run exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import io
import sys
from collections.abc import Callable, Coroutine
from importlib import metadata
from typing import Any, TypeVar

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession

from aeon.adapters.console import ConsoleProgress
from aeon.adapters.durable.rows import runs_schema
from aeon.application.views import mcp as v
from aeon.application.views import mcp_arguments as a
from aeon.domain.text import terminal_safe

T = TypeVar("T")


class _Lines(io.StringIO):
    """A text stream that hands each whole, non-blank line it is written to `emit`."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        super().__init__()
        self._emit, self._part = emit, ""

    def write(self, text: str) -> int:
        *whole, self._part = (self._part + text).split("\n")
        for line in whole:
            if line.strip():
                self._emit(line)
        return len(text)


class Relay:
    """One call's progress, as `aeon run` shows it: lines on stderr (unless quiet) and, when the client asked for
    progress, notifications/progress in order. Lines may come from any thread (a durable run executes in DBOS's)."""

    def __init__(self, session: ServerSession, *, quiet: bool) -> None:
        self._session, self._quiet = session, quiet
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.display = ConsoleProgress(_Lines(self.status), verbose=False)

    def status(self, line: str) -> None:
        if not self._quiet:
            print(f"aeon: {terminal_safe(line)}", file=sys.stderr, flush=True)
        self._loop.call_soon_threadsafe(self._queue.put_nowait, line)

    async def pump(self) -> None:
        sent = 0
        while (line := await self._queue.get()) is not None:
            sent += 1
            await self._session.report_progress(sent, None, line)  # a no-op unless the call carried a token

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, None)


async def guarded(work: Coroutine[Any, Any, T]) -> T:
    """`work` in a task of its own. A cancelled call (the client's notifications/cancelled, or the client gone)
    cancels it once and waits, shielded, until it has ended: a run then ends as interrupted, on the record, and
    closes its resources. (The SDK cancels a handler's scope, which cancels it again at every await; the run's own
    task is cancelled exactly once, as Ctrl-C cancels `aeon run`; a durable run, executing in DBOS's thread, is
    cancelled on the record then: ServedRuns.started.)"""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with anyio.CancelScope(shield=True):
            task.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await task
        raise


INSTRUCTIONS = (
    "Aeon runs a request as a plan of steps (tool calls and LLM reasoning) under a budget, and returns a structured "
    "result whatever happens: completed, failed (no step succeeded, or the last one failed), ttl_expired, error, "
    "interrupted, unverified, denied, or awaiting_approval when a tool call waits for a person. Use run for a "
    "request; validate to check a hand-written plan before running it; runs and resume for durable runs."
)


def aeon_tools(about: dict[str, str], plan: dict[str, Any]) -> list[types.Tool]:
    """`aeon mcp`'s four tools as the SDK lists them: `about`, each one's description; `plan`, the JSON schema of a
    plan over the tools configured (the argument run and validate take)."""
    read_only = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    runs = types.ToolAnnotations(open_world_hint=True)  # it calls a model, and the configured tools
    again = types.ToolAnnotations(idempotent_hint=True, open_world_hint=True)  # a finished run: its record
    made = (
        ("run", a.RunArgs, v.RESULT_SCHEMA, runs), ("validate", a.ValidateArgs, v.VALIDATE_SCHEMA, read_only),
        ("runs", a.RunsArgs, runs_schema(), read_only), ("resume", a.ResumeArgs, v.RESULT_SCHEMA, again),
    )  # fmt: skip
    return [
        types.Tool(
            name=name,
            description=about[name],
            input_schema=a.input_schema(args, plan),
            output_schema=output,
            annotations=hints,
        )
        for name, args, output, hints in made
    ]


def tool_result(structured: dict[str, Any], text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


def tool_error(code: str, message: str) -> types.CallToolResult:
    """An isError result naming what went wrong (`message`, already redacted)."""
    return types.CallToolResult(
        content=[types.TextContent(text=message)],
        structured_content={"status": "error", "error": {"code": code, "message": message}},
        is_error=True,
    )


def server(on_list_tools: Any, on_call_tool: Any) -> Server[Any]:
    """The SDK's low-level server named aeon, at the installed version, with Aeon's instructions and handlers."""
    try:
        version = metadata.version("aeon")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return Server("aeon", version=version, instructions=INSTRUCTIONS, on_list_tools=on_list_tools,
                  on_call_tool=on_call_tool)  # fmt: skip
