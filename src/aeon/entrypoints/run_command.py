"""`aeon run`'s options, and what it does once its settings are loaded and its tools registered (ran)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from aeon.entrypoints.stdout import second_signal_leaves
from aeon.entrypoints.terminal import terminal_safe

if TYPE_CHECKING:
    from aeon.adapters.tools.composite import CompositeTools
    from aeon.application.kernel.orchestrator import Orchestrator
    from aeon.application.ports import ApproverPort, ProgressPort
    from aeon.application.results import RunResult
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
DurableOpt = Annotated[
    bool | None,
    typer.Option(
        "--durable/--no-durable",
        help="Record the run on DBOS, so that `aeon resume` finishes it after a crash (default: durable.enabled, "
        "true); --no-durable runs it in this process only.",
        show_default=False,
    ),
]


def say(message: str) -> None:
    typer.echo(f"aeon: {terminal_safe(message)}", err=True)


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
) -> tuple[RunResult, str | None, list[int]]:
    """`aeon run` once its settings are loaded and its tools registered: the plan read against them, the one rule
    for durable-or-not, then the run in this process or as a durable run. Returns the result, a note on it, and the
    signals received meanwhile."""
    import asyncio
    from functools import partial

    from dependency_injector import providers

    from aeon.entrypoints.durable.waiting import run_durable
    from aeon.entrypoints.render import present
    from aeon.entrypoints.session import session

    settings = container.settings()
    given = _plan(plan, registry)
    received: list[int] = []
    asker, wanted = _durable_or_not(container, registry, given, durable=durable, as_json=as_json)
    if asker is not None and not wanted:
        container.approver.override(providers.Object(asker))
    # the durable run opens this container's log itself: the session only says which model answers
    execute = None if wanted else partial(_run, request=request, plan=given, received=received)
    result, note = asyncio.run(session(container, request, execute=execute, status=status, plan=given))
    if result is None:
        show_waiting = partial(present, as_json=as_json, history=history, redactor=container.redactor())
        result = run_durable(
            settings,
            config,
            overrides,
            request,
            given,
            progress=progress,
            inline=asker,
            show_waiting=None if asker is not None else show_waiting,
            tools=registry,  # its MCP servers, started once: the durable run uses them too
            container=container,  # and this container builds it: one per process
        )
    return result, note, received


def _plan(plan: Path | None, registry: CompositeTools) -> Plan | None:
    """The hand-written plan given (--plan), checked against the registered tools."""
    from aeon.adapters.documents import read_document
    from aeon.application.plans.plan_documents import plan_from_document

    if plan is None:
        return None
    known = {spec.name: spec for spec in registry.list()}
    return plan_from_document(read_document(plan, what="plan"), source=str(plan), tools=known)


def _durable_or_not(
    container: Container, registry: CompositeTools, plan: Plan | None, *, durable: bool | None, as_json: bool
) -> tuple[ApproverPort | None, bool]:
    """Who asks about tool calls on this terminal (None: nobody can), and whether the run is durable: the one rule
    (application/runs.py), a call that may need approval with nobody to ask making it durable unless said not."""
    from aeon.application.runs import NEEDS_RECORD, durable_wanted
    from aeon.entrypoints.approval import asks_here, may_need_approval, terminal_approver

    settings = container.settings()
    asker = terminal_approver(registry, container.redactor()) if asks_here(as_json=as_json) else None
    needs = asker is None and may_need_approval(registry.list(), plan)
    wanted = durable_wanted(durable, configured=settings.durable.enabled, needs_record=needs)
    if wanted and durable is None and not settings.durable.enabled:
        say(f"durable: {NEEDS_RECORD}")
    return asker, wanted


async def _run(orchestrator: Orchestrator, *, request: str, plan: Any, received: list[int]) -> RunResult:
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
        return await orchestrator.run(request, plan=plan)
    finally:
        for signum in handled:
            loop.remove_signal_handler(signum)
        if received:  # the run ended as interrupted: another signal from now on ends the process at once
            second_signal_leaves(SIGNAL_EXIT.get(signal.Signals(received[0]), 130))
