"""One MCP server's connection through the official SDK's client, owned by one task on the MCP host's event loop.

Imported only when a server is configured: `aeon --version` never loads the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from importlib import metadata
from typing import Any

import httpx2
import mcp_types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from aeon.adapters.tools.mcp.config import McpServerConfig
from aeon.adapters.tools.mcp.results import MAX_RESULT_BYTES
from aeon.adapters.tools.mcp.stderr import StderrTail
from aeon.adapters.tools.mcp.stdio import LineTooLong, capped_stdio_client

# The SDK logs what it also raises or hands us (a line it could not parse, with a traceback); Aeon reports each
# failure once, as one line naming the server, so the SDK's records go nowhere (Python would print them on stderr).
logging.getLogger("mcp").addHandler(logging.NullHandler())
logging.getLogger("mcp").propagate = False

MAX_LIST_PAGES = 20  # a paginator that never ends cannot hold the start
CLOSE_GRACE = 8.0  # the SDK stops a stdio server in at most ~6.5 s (stdin closed, SIGTERM, SIGKILL)
# a stdio message no longer than a result Aeon keeps, with room for the JSON-RPC envelope; longer ones are skipped
MAX_LINE_BYTES = MAX_RESULT_BYTES + 64 * 1024
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # the SDK's own defaults; each call is bounded by its deadline too


class StartFailed(Exception):
    """The server did not start, initialize or list its tools; the message says why, in one line."""


class CallFailed(Exception):
    """A call that got no usable answer (connection closed, protocol error, malformed message); one line."""


class Connection:
    """Enters the SDK client (transport, session, handshake) in its own task, lists the tools, then serves calls
    made from other tasks of the same loop until `close`. A malformed message, or the end of the connection, fails
    the calls still waiting at once: no call waits for an answer that cannot come."""

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._waiters: set[asyncio.Future[str]] = set()
        self._stderr: StderrTail | None = None
        self._refused: str | None = None  # the last HTTP error status, which the SDK's error does not carry
        self.ended: str | None = None

    async def open(self, seconds: float) -> list[dict[str, Any]]:
        """Start the server and return its tools as listed (JSON). Raises StartFailed, within `seconds`
        (and the few the SDK takes to stop a server that did not start in time)."""
        if self.config.command is not None:
            self._stderr = StderrTail(asyncio.get_running_loop())
        ready: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready), name=f"aeon-mcp-{self.config.name}")
        done, _ = await asyncio.wait({ready}, timeout=seconds)
        if not done:
            ready.cancel()
            await self.close(grace=0.0)
            raise StartFailed(f"did not start within {seconds:g} s (start, initialize, tools/list){self._said()}")
        return ready.result()

    async def _serve(self, ready: asyncio.Future[list[dict[str, Any]]]) -> None:
        try:
            aeon = mcp_types.Implementation(name="aeon", version=_version())
            async with Client(self._transport(), cache=None, message_handler=self._on_message, client_info=aeon) as c:
                listed = await _list_tools(c)
                self._client = c
                ready.set_result(listed)
                await self._closing.wait()
            self._end("it was stopped")
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            self._end("it was stopped")
            raise
        except BaseException as exc:
            why = self.describe(exc)
            if not ready.done():
                ready.set_exception(StartFailed(why))
            self._end(why)
        finally:
            self._client = None

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        config = self.config
        if config.url is not None:

            async def seen(response: httpx2.Response) -> None:
                if response.status_code >= 400:
                    self._refused = f"HTTP {response.status_code} {response.reason_phrase}".strip()

            hooks = {"response": [seen]}
            async with (
                httpx2.AsyncClient(headers=dict(config.headers), timeout=_HTTP_TIMEOUT, event_hooks=hooks) as http,
                streamable_http_client(config.url, http_client=http) as streams,
            ):
                yield streams
            return
        assert config.command is not None and self._stderr is not None
        env = dict(config.env) or None  # merged over the SDK's few safe variables (PATH, HOME …), not ours
        params = StdioServerParameters(command=config.command, args=list(config.args), env=env)
        async with capped_stdio_client(params, errlog=self._stderr.writer, max_line=MAX_LINE_BYTES) as streams:
            yield streams

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """The server's `tools/call` result (JSON, as sent). Raises CallFailed."""
        client = self._client
        if client is None:
            raise CallFailed(f"is not running: {self.ended or 'it was never started'}")
        self._refused = None
        broken: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiters.add(broken)
        call = asyncio.ensure_future(client.call_tool(tool, args))
        try:
            either: set[asyncio.Future[Any]] = {call, broken}
            done, _ = await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if call not in done:
                raise CallFailed(broken.result())
            result = call.result()
        except (CallFailed, asyncio.CancelledError):
            raise
        except BaseException as exc:
            raise CallFailed(self.describe(exc)) from None
        finally:
            self._waiters.discard(broken)
            call.cancel()
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def _on_message(self, message: Any) -> None:
        """Notifications are not needed; a transport fault (a line that is not JSON-RPC) fails the waiting calls."""
        if isinstance(message, LineTooLong):  # skipped unread: the session goes on with the next message
            self._fail_waiters(f"sent a result over {MAX_RESULT_BYTES >> 20} MiB: skipped unread past that")
        elif isinstance(message, Exception):
            self._fail_waiters(f"sent a malformed message: {_first_problem(message)}")

    def _fail_waiters(self, why: str) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(why)

    def _end(self, why: str) -> None:
        self.ended = self.ended or why
        self._fail_waiters(f"is not running: {self.ended}")

    async def close(self, grace: float = CLOSE_GRACE) -> None:
        """Leave the client's contexts in the task that entered them (the SDK then stops a stdio server); a server
        that takes longer than `grace` seconds is cancelled, which the SDK stops within its own bounded waits."""
        self._closing.set()
        task = self._task
        grace = grace if self._client is not None else 0.0  # still starting: nothing to wind down gently
        if task is not None and not task.done():
            _, pending = await asyncio.wait({task}, timeout=grace)
            if pending:
                task.cancel()
                await asyncio.wait({task}, timeout=CLOSE_GRACE)
        if self._stderr is not None:
            self._stderr.close()

    def describe(self, exc: BaseException) -> str:
        """What went wrong, in one line, from the innermost error of an SDK exception (group)."""
        exc = _innermost(exc)
        if isinstance(exc, StartFailed):
            return str(exc) + self._said()
        if isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
            said = "closed the connection (the server may have exited)"
        elif isinstance(exc, MCPError):
            said = f"answered with error {exc.code}: {_one_line(exc.message)}"
            said += f" ({self._refused})" if self._refused else ""
        elif isinstance(exc, ValidationError):
            said = f"sent a malformed message: {_first_problem(exc)}"
        elif isinstance(exc, OSError) and self.config.command is not None and self._client is None:
            said = f"cannot run {self.config.command!r}: {exc.strerror or _one_line(exc)}"
        elif isinstance(exc, httpx2.HTTPError):
            said = f"cannot be reached: {type(exc).__name__}: {_one_line(exc)}"
        else:
            said = f"failed: {type(exc).__name__}: {_one_line(exc)}"
        return said + self._said()

    def _said(self) -> str:
        tail = self._stderr.tail() if self._stderr is not None else ""
        return f"; its stderr ended: {tail}" if tail else ""


async def _list_tools(client: Client) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            return tools
    raise StartFailed(f"its tools/list went on past {MAX_LIST_PAGES} pages")


def _innermost(exc: BaseException) -> BaseException:
    """The first error inside nested exception groups that is not a cancellation (anyio's task groups wrap)."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = inner[0] if inner else exc.exceptions[0]
    return exc


def _first_problem(exc: Exception) -> str:
    """A parse error in one short line: a pydantic error's first problem, not its whole report."""
    if isinstance(exc, ValidationError) and exc.errors():
        return _one_line(exc.errors()[0]["msg"])
    return _one_line(exc)


def _one_line(value: object, limit: int = 300) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _version() -> str:
    try:
        return metadata.version("aeon")
    except metadata.PackageNotFoundError:
        return "0"
