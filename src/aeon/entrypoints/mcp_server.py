"""`aeon mcp`: Aeon as an MCP server on stdin/stdout (the official SDK's low-level server). Its tools run, validate,
runs and resume answer with what `aeon run --json`, `validate` and `runs --json` show, redacted the same way; only
protocol messages reach stdout (the SDK points file descriptor 1 at stderr while it serves)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import msgspec
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from aeon.adapters import mcp_relay as r
from aeon.adapters.console import result_text
from aeon.adapters.documents import json_argument
from aeon.adapters.durable.rows import runs_text
from aeon.adapters.mcp_relay import Relay, guarded
from aeon.application.errors import InputError
from aeon.application.plans.validation import MAX_PLAN_STEPS, plan_schema
from aeon.application.redaction import Redactor
from aeon.application.results import RunResult
from aeon.application.runs import RunCommand, Runs, capped, plan_given, run_overrides
from aeon.application.views import mcp as v
from aeon.application.views import mcp_arguments as a
from aeon.application.views.result import result_document
from aeon.domain.errors import AeonError
from aeon.domain.text import request_problem
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.container import Container, build_container, tools_opened
from aeon.entrypoints.failures import EXIT_OK
from aeon.entrypoints.mcp_durable import DurableCalls
from aeon.entrypoints.render import SIGNAL_EXIT
from aeon.entrypoints.secrets import redactor_for
from aeon.entrypoints.session import plan_problems, runs_for

Handler = Callable[[dict[str, Any] | None, Relay], Awaitable[types.CallToolResult]]


@dataclass(frozen=True)
class _Prepared:
    container: Container
    runs: Runs
    command: RunCommand
    notes: list[str]


class AeonServer:
    """The server for one config file: the config (and its tools modules) is read at start, so a broken one is a
    usage error before anything is served, and again at every call, as each `aeon` command reads it."""

    def __init__(self, config: Path | None, *, quiet: bool = False, debug: bool = False) -> None:
        self.config, self.quiet, self.debug = config, quiet, debug
        settings = load_settings(config)
        self.redactor = redactor_for(settings)
        with tools_opened(build_container(settings)) as tools:  # MCP tool servers stop once listed
            specs = tools.list()
        about, plan = v.descriptions(specs), plan_schema([s.name for s in specs], max_steps=MAX_PLAN_STEPS)
        self.tools = r.aeon_tools(about, plan)
        self._handlers: dict[str, Handler] = {
            "run": self._run,
            "validate": self._validate,
            "runs": self._runs,
            "resume": self._resume,
        }
        self.durable = DurableCalls(config)
        self._calls, self._idle = 0, asyncio.Event()
        self._idle.set()
        self.server: Server[Any] = r.server(self._list_tools, self._call_tool)

    # -- the protocol's two requests ----------------------------------------------------------------------------
    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """One tool call, its progress sent before its result."""
        self._calls += 1
        self._idle.clear()
        relay = Relay(ctx.session, quiet=self.quiet)
        pump = asyncio.ensure_future(relay.pump())
        try:
            result = await self._answer(params, relay)
            relay.close()
            await pump
            return result
        finally:
            pump.cancel()  # cancelled calls send no more progress
            self._calls -= 1
            if not self._calls:
                self._idle.set()

    async def _answer(self, params: types.CallToolRequestParams, relay: Relay) -> types.CallToolResult:
        """Bad input is an isError result naming what is wrong; so is a bug, in one line (the traceback on stderr
        with --debug): the server goes on serving either way."""
        try:
            handler = self._handlers.get(params.name)
            if handler is None:
                raise InputError(f"unknown tool {params.name!r}: Aeon serves {', '.join(self._handlers)}")
            return await handler(params.arguments, relay)
        except AeonError as exc:
            return self._error(exc.code, str(exc))
        except Exception as exc:
            if self.debug:
                print(self.redactor.text(traceback.format_exc()), file=sys.stderr, flush=True)
            return self._error("AEON.INTERNAL", f"internal error: {type(exc).__name__}: {exc}")

    def _error(self, code: str, message: str) -> types.CallToolResult:
        message = self.redactor.text(message)
        print(f"aeon: {message}", file=sys.stderr, flush=True)
        return r.tool_error(code, message)

    # -- the tools ----------------------------------------------------------------------------------------------
    async def _run(self, given: dict[str, Any] | None, relay: Relay) -> types.CallToolResult:
        args: a.RunArgs = a.arguments(a.RunArgs, given, "run")
        if (bad := request_problem(args.request)) is not None:
            raise InputError(bad)
        ready = await asyncio.to_thread(self._prepare, args, relay)
        try:
            result = await guarded(ready.runs.start(ready.command))
        finally:  # a durable run uses the process's shared tools: this call's MCP servers stop by then
            await asyncio.to_thread(ready.container.tools.shutdown)
        result.warnings.extend(ready.notes)
        return self._run_result(result, ready.container.redactor())

    def _prepare(self, args: a.RunArgs, relay: Relay) -> _Prepared:
        """The call's settings (its caps never above the config's), container, tools and plan: what `aeon run`
        does before the run starts. In a thread: a tools module may take seconds to import."""
        base, notes = load_settings(self.config).run, list[str]()
        ttl = capped("ttl", args.ttl, base.ttl, notes)
        calls = capped("max_llm_calls", args.max_llm_calls, base.max_llm_calls, notes)
        overrides = run_overrides(ttl=ttl, max_llm_calls=calls)
        settings = load_settings(self.config, overrides)
        container = build_container(settings, progress=relay.display, status=relay.status)
        registry = container.tools()  # a broken tools module is bad input before the run
        plan = (
            plan_given(json_argument(args.plan, source="the plan argument"), "the plan argument", registry)
            if args.plan is not None
            else None
        )
        durable = partial(self.durable.start, container, overrides, relay.status)
        forced = partial(notes.append, "durable: a tool call may need approval, and the run waits for it on the record")
        runs = runs_for(container, args.request, durable=durable, status=relay.status, forced=forced)
        # nobody can be asked here: a call that needs approval waits on the record
        return _Prepared(container, runs, RunCommand(args.request, plan, args.durable, progress=relay.display), notes)

    async def _validate(self, given: dict[str, Any] | None, relay: Relay) -> types.CallToolResult:
        args: a.ValidateArgs = a.arguments(a.ValidateArgs, given, "validate")
        doc = json_argument(args.plan, source="the plan argument")
        problems = await asyncio.to_thread(plan_problems, load_settings(self.config), doc)
        return r.tool_result({"valid": not problems, "problems": problems}, v.problems_text(problems))

    async def _runs(self, given: dict[str, Any] | None, relay: Relay) -> types.CallToolResult:
        args: a.RunsArgs = a.arguments(a.RunsArgs, given, "runs")
        rows = await self.durable.runs(args.status, args.limit, most=a.MOST_RUNS)
        return r.tool_result({"runs": msgspec.to_builtins(rows)}, runs_text(rows))

    async def _resume(self, given: dict[str, Any] | None, relay: Relay) -> types.CallToolResult:
        args: a.ResumeArgs = a.arguments(a.ResumeArgs, given, "resume")
        outcome = await guarded(self.durable.resume(args.run_id, relay))
        if not isinstance(outcome, RunResult):  # a tool call cut off in flight: a person checks its effect first
            return self._error(outcome.code, outcome.message)
        return self._run_result(outcome, redactor_for(load_settings(self.config)))

    def _run_result(self, result: RunResult, redactor: Redactor) -> types.CallToolResult:
        result = redactor.struct(result, RunResult)
        return r.tool_result(result_document(result), result_text(result))

    # -- serving ------------------------------------------------------------------------------------------------
    async def serve(self) -> int:
        """Serve until the client closes stdin (exit 0), or until SIGINT or SIGTERM: then every call in flight is
        cancelled (its run ends as interrupted, on the record) and the process exits with the signal's code."""
        loop = asyncio.get_running_loop()
        with anyio.CancelScope() as scope:
            for signum in SIGNAL_EXIT:
                with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
                    loop.add_signal_handler(signum, self._on_signal, scope, signum)
            async with stdio_server() as (read, write):
                await self.server.run(read, write, self.server.create_initialization_options())
        await self.durable.leave(EXIT_OK)
        return EXIT_OK

    def _on_signal(self, scope: anyio.CancelScope, signum: int) -> None:
        asyncio.get_running_loop().create_task(self._stop(scope, signum))

    async def _stop(self, scope: anyio.CancelScope, signum: int) -> None:
        """After a signal: cancel every call, wait for their runs to end on the record, then exit — the SDK's stdin
        reader is a thread blocked on a read that no cancellation ends."""
        scope.cancel()
        await self._idle.wait()
        await self.durable.leave(SIGNAL_EXIT[signal.Signals(signum)], now=True)


def serve(config: Path | None, *, quiet: bool = False, debug: bool = False) -> int:
    """`aeon mcp`: read the config (AeonError: a usage error, nothing served), then serve on stdio until the client
    goes away; the exit code."""
    return asyncio.run(AeonServer(config, quiet=quiet, debug=debug).serve())
