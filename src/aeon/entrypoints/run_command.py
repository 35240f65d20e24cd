"""`aeon run`'s options, and what it does once its settings are loaded and its tools registered (ran)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from aeon.adapters.process import second_signal_leaves
from aeon.entrypoints.failures import say

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from aeon.adapters.tools.composite import CompositeTools
    from aeon.application.ports import ProgressPort
    from aeon.application.results import RunResult
    from aeon.application.runs import Starts
    from aeon.domain.plan import Plan
    from aeon.entrypoints.container import Container

RequestArg = Annotated[str, typer.Argument(help="What you want done, in plain language.", metavar="REQUEST")]
PlanOpt = Annotated[
    Path | None, typer.Option("--plan", help="Run this hand-written JSON/YAML plan instead of generating one.")
]
TtlOpt = Annotated[
    int | None,
    typer.Option("--ttl", min=0, help="Most passes of the loop; adaptive depth may use fewer (0 stops at once)."),
]
MaxCallsOpt = Annotated[int | None, typer.Option("--max-llm-calls", min=0, help="Cap on LLM calls for the whole run.")]
MaxCostOpt = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        help="Cap in USD for the whole run, priced from the config's price table; a call that could cross it "
        "is not sent.",
    ),
]
JsonDocOpt = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout.")]
LogFileOpt = Annotated[Path | None, typer.Option("--log-file", help="Append the JSONL event log here.")]
HistoryOpt = Annotated[
    Path | None, typer.Option("--history", help="Write the execution history (every pass) as JSON here.")
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No live progress on stderr.")]
ThreadOpt = Annotated[
    str | None,
    typer.Option("--thread", help="Run in this thread: the run sees its earlier requests, answers and memory."),
]
DurableOpt = Annotated[
    bool | None,
    typer.Option(
        "--durable/--no-durable",
        help="Record the run on DBOS, so that `aeon resume` finishes it after a crash (default: durable.enabled, "
        "true); --no-durable runs it in this process only.",
        show_default=False,
    ),
]


def ran(
    container: Container,
    registry: CompositeTools,
    *,
    request: str,
    plan: Path | None,
    durable: bool | None,
    as_json: bool,
    history: Path | None,
    config: Path | None,
    overrides: dict[str, Any],
    progress: ProgressPort | None,
    status: Callable[[str], None] | None,
    thread: str | None = None,
) -> tuple[RunResult, list[int]]:
    """`aeon run` once its settings are loaded and its tools registered: who asks about tool calls on this terminal
    (nobody with --json or without a terminal), the plan read against the tools, then the run use case. Returns the
    result and the signals received meanwhile."""
    import asyncio
    from functools import partial

    from aeon.adapters.approval import terminal_approver
    from aeon.application.runs import NEEDS_RECORD, RunCommand, edited_problem
    from aeon.entrypoints.session import runs_for

    received: list[int] = []
    asks_here = not as_json and sys.stdin.isatty() and sys.stderr.isatty()  # a person at a terminal, no --json
    asker = terminal_approver(registry, container.redactor(), edited_problem) if asks_here else None
    durable_port = partial(_durable, container, registry, config, overrides, as_json=as_json, history=history)
    runs = runs_for(
        container, request, durable=durable_port, status=status, forced=lambda: say(f"durable: {NEEDS_RECORD}"),
        around=partial(_guarded, received=received),
    )  # fmt: skip
    command = RunCommand(request, _plan(plan, registry), durable, approver=asker, progress=progress, thread=thread)
    return runs.run(command, run_async=asyncio.run), received


def _durable(
    container: Container, registry: CompositeTools, config: Path | None, overrides: dict[str, Any],
    *, as_json: bool, history: Path | None,
) -> Starts:  # fmt: skip
    """`aeon run`'s durable port: the run's id said on stderr, Ctrl-C and SIGTERM leaving it on the record, and with
    nobody to ask here a run waiting for a decision shown and left waiting on the record (exit 6)."""
    from aeon.adapters.process import loading

    with loading():
        from aeon.adapters.durable.starts import DurableStart, Recorded
        from aeon.entrypoints.durable.factory import process
    from aeon.entrypoints.durable.options import leave_waiting, stoppable
    from aeon.entrypoints.render import present

    def waiting(result: RunResult) -> None:
        leave_waiting(lambda: present(result, as_json=as_json, history=history, redactor=container.redactor()))

    def stays(run_id: str) -> AbstractContextManager[None]:
        return stoppable(f"run {run_id} is on the record; finish it with: aeon resume {run_id}")

    # the command's settings, container (one per process) and tools (their MCP servers start once) build it here
    recorded = Recorded(container.settings(), config, overrides, container, registry)
    return DurableStart(process(), recorded, say=say, stays=stays, waiting=waiting)


def _plan(plan: Path | None, registry: CompositeTools) -> Plan | None:
    """The hand-written plan given (--plan), checked against the registered tools."""
    from aeon.adapters.documents import read_document
    from aeon.application.runs import plan_given

    return plan_given(read_document(plan, what="plan"), str(plan), registry) if plan is not None else None


async def _guarded(run: Awaitable[RunResult], *, received: list[int]) -> RunResult:
    """The run, with SIGINT and SIGTERM cancelling it: the orchestrator then ends it as interrupted, on the record."""
    import asyncio
    import contextlib
    import signal

    from aeon.entrypoints.render import SIGNAL_EXIT

    loop, task = asyncio.get_running_loop(), asyncio.current_task()

    def interrupt(signum: int) -> None:
        received.append(signum)
        if task is not None and len(received) == 1:  # a second signal while we wind down changes nothing
            task.cancel()

    handled = []
    for signum in SIGNAL_EXIT:
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):  # not the main thread, or Windows
            loop.add_signal_handler(signum, interrupt, signum)
            handled.append(signum)
    try:
        return await run
    finally:
        for signum in handled:
            loop.remove_signal_handler(signum)
        if received:  # the run ended as interrupted: another signal from now on ends the process at once
            second_signal_leaves(SIGNAL_EXIT.get(signal.Signals(received[0]), 130))
