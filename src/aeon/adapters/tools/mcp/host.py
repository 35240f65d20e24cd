"""McpTools: the tools of the configured MCP servers as a ToolPort, their connections on one private event loop."""

from __future__ import annotations

import asyncio
import atexit
import builtins
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from aeon.adapters.tools.mcp.catalog import Catalog, catalog
from aeon.adapters.tools.mcp.config import McpServerConfig
from aeon.adapters.tools.mcp.results import MAX_RESULT_BYTES, MalformedResult, error_text, tool_output
from aeon.application.errors import ConfigurationError, ToolNotFound
from aeon.application.redaction import Redactor
from aeon.application.schemas import schema_problems
from aeon.domain.tools import ToolResult, ToolSpec

if TYPE_CHECKING:
    from aeon.adapters.tools.mcp.connection import Connection

DEFAULT_TIMEOUT = 60.0
CLOSE_WAIT = 12.0  # closing every server at once: the SDK's bounded stop, and a margin


class McpTools:
    """Satisfies ToolPort. `start` starts every server (once), lists its tools and makes them Aeon tools; `close`
    stops them, also at interpreter exit if nobody did. Never raises for a server's fault once started.

    The SDK's clients are anyio context managers bound to the task that enters them: each server's connection lives
    in one task on an event loop of our own, on a daemon thread, for as long as the servers run. A call from any
    loop (a run, a durable workflow, a batch's runs at once) is handed over to it and awaited there, bounded by the
    call's deadline: past it, or when the caller is cancelled (Ctrl-C), the caller stops waiting at once and the
    call is cancelled on the servers' loop.
    """

    def __init__(
        self,
        servers: Sequence[McpServerConfig],
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        redactor: Redactor | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self._configs = list(servers)
        self._timeout = timeout
        self._redactor = redactor or Redactor([])
        self._warn = warn
        self._specs: dict[str, ToolSpec] = {}
        self._routes: dict[str, tuple[Connection, str]] = {}  # Aeon name → (connection, the server's own name)
        self._connections: list[Connection] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def start(self, *, start_limit: float | None = None) -> None:
        """Start every server at once and take its tools. Raises ConfigurationError naming the first server that
        cannot start, initialize or list its tools within its start_timeout (or `start_limit`, when smaller), or
        whose tools the config cannot take; the servers already started are stopped then."""
        if self._loop is not None or not self._configs:
            return
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="aeon-mcp", daemon=True)
        self._thread.start()
        atexit.register(self.close)
        opening = self._on_loop(self._open_all(start_limit))
        try:
            listed = opening.result()
            for connection, tools in zip(self._connections, listed, strict=True):
                self._add(connection, catalog(connection.config, tools))
        except BaseException:  # Ctrl-C too: stop what started
            opening.cancel()
            self.close()
            raise

    async def _open_all(self, start_limit: float | None) -> list[list[dict[str, Any]]]:
        from aeon.adapters.tools.mcp.connection import Connection, StartFailed  # the SDK, only when servers run

        self._connections = [Connection(config) for config in self._configs]

        async def open_one(connection: Connection) -> list[dict[str, Any]]:
            config = connection.config
            limit = min(config.start_timeout, start_limit) if start_limit is not None else config.start_timeout
            try:
                return await connection.open(limit)
            except StartFailed as exc:
                raise ConfigurationError(
                    self._redactor.text(f"MCP server {config.name!r} ({config.transport}) {exc}")
                ) from None

        return await asyncio.gather(*(open_one(c) for c in self._connections))

    def _add(self, connection: Connection, found: Catalog) -> None:
        for warning in found.warnings:
            if self._warn is not None:
                self._warn(self._redactor.text(warning))
        for spec in found.specs:
            if spec.name in self._specs:
                other = self._specs[spec.name].server
                raise ConfigurationError(
                    f"tool {spec.name!r} is offered by MCP servers {other!r} and {connection.config.name!r}: "
                    "give one of them a prefix (tools.mcp[].prefix)"
                )
            self._specs[spec.name] = spec
            self._routes[spec.name] = (connection, found.names[spec.name])

    def _on_loop(self, coro: Any) -> concurrent.futures.Future[Any]:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def list(self) -> builtins.list[ToolSpec]:
        return builtins.list(self._specs.values())

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def is_idempotent(self, name: str) -> bool:
        spec = self._specs.get(name)
        return spec is not None and spec.idempotent

    def require_approval(self, name: str, needed: bool = True) -> None:
        """Whether each call of tool `name` needs a person's approval (config tools.approval), over its flags."""
        spec = self._specs.get(name)
        if spec is None:
            raise ToolNotFound(f"unknown tool {name!r} (MCP tools: {', '.join(sorted(self._specs)) or 'none'})")
        self._specs[name] = msgspec.structs.replace(spec, requires_approval=needed)

    async def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float | None = None) -> ToolResult:
        """Call the tool on its server, its arguments checked against its inputSchema first. Its answer becomes
        the output (tool_output), `isError` and every failure a ToolResult error naming the server. Raises
        ToolNotFound."""
        route = self._routes.get(name)
        if route is None:
            raise ToolNotFound(f"unknown tool {name!r} (MCP tools: {', '.join(sorted(self._routes)) or 'none'})")
        connection, own = route
        server = connection.config.name
        problems = schema_problems(dict(args), self._specs[name].input_schema)
        if problems:
            return ToolResult(error="ValidationError: " + "; ".join(f"{at}: {msg}" for at, msg in problems))
        limits = [t for t in (connection.config.timeout or self._timeout, time_left) if t is not None]
        limit = min(limits) if limits else None
        try:
            if self._closed:
                raise RuntimeError("is not running: it was stopped")
            async with asyncio.timeout(limit):
                raw = await asyncio.wrap_future(self._on_loop(connection.call(own, dict(args))))
        except TimeoutError:
            caller = time_left is not None and limit == time_left
            why = "the run's time cap" if caller else "its timeout"
            error = f"TimeoutError: MCP server {server!r} did not answer within {limit:g} s ({why}); call cancelled"
            return ToolResult(error=error, cut_at_time_left=caller)
        except Exception as exc:  # CallFailed, or the servers were stopped
            return ToolResult(error=f"MCP server {server!r} {exc}")
        return _result(server, raw)

    def close(self) -> None:
        """Stop every server (the SDK's shutdown: stdin closed, then SIGTERM, then SIGKILL) and the loop; once,
        from any thread but the loop's own, bounded."""
        if self._closed or self._loop is None:
            return
        self._closed = True
        atexit.unregister(self.close)
        loop, thread = self._loop, self._thread
        if not loop.is_closed() and loop.is_running():

            async def close_all() -> None:
                await asyncio.gather(*(c.close() for c in self._connections), return_exceptions=True)
                rest = asyncio.all_tasks() - {asyncio.current_task()}
                for task in rest:  # calls still running, a start cut short: nothing is left pending on the loop
                    task.cancel()
                if rest:
                    await asyncio.wait(rest, timeout=1.0)

            # a server that outlives its SDK's kill (TimeoutError): nothing more can be done from here
            with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
                self._on_loop(close_all()).result(timeout=CLOSE_WAIT)
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=2.0)
            if not thread.is_alive():
                loop.close()


def _result(server: str, raw: Mapping[str, Any]) -> ToolResult:
    """A call's answer as the ToolResult the executor checks and records."""
    try:
        if len(msgspec.json.encode(raw)) > MAX_RESULT_BYTES:
            raise MalformedResult(f"its result is over {MAX_RESULT_BYTES // (1024 * 1024)} MiB")
        if raw.get("isError"):
            return ToolResult(error=f"MCP server {server!r} reported an error: {error_text(raw)}")
        return ToolResult(output=tool_output(raw))
    except MalformedResult as exc:
        return ToolResult(error=f"MCP server {server!r} sent a malformed result: {exc}")
