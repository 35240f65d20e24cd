"""The run use case on Aeon's container, shared by the CLI, `aeon mcp`, `aeon batch` and the Python API: the checks
made before a run may spend anything (`ready`, `checks`), the in-process port (`in_process`), the use case itself
(`runs_for`), and a plan's problems."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from aeon.adapters.llm.settings import preflight
from aeon.application.errors import ConfigurationError
from aeon.application.kernel.orchestrator import Orchestrator
from aeon.application.kernel.sections import policy_of
from aeon.application.ports import ApproverPort, LLMPort, ProgressPort
from aeon.application.results import RunResult
from aeon.application.runs import (
    Checked,
    InProcessRuns,
    Preflight,
    Runs,
    Starts,
    calls_model,
    plan_of,
    said_model,
)
from aeon.application.runs.rule import plan_report as report
from aeon.domain.log_records import LogRecord
from aeon.domain.plan import Plan
from aeon.domain.threads import ThreadContext
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.container import Container, build_container, opened, provided, tools_opened
from aeon.entrypoints.secrets import redactor_for

# what runs an in-process run's coroutine (the CLI: with SIGINT and SIGTERM cancelling it)
Around = Callable[[Awaitable[RunResult]], Awaitable[RunResult]]


def ready_to_serve(stack: contextlib.ExitStack, settings: Settings, bound: str, first: LogRecord) -> None:
    """Before a process serves queued runs (`aeon batch`, `aeon serve`): the tools load (their MCP servers start),
    lent to the runs executed here for as long as `stack` holds; the model can run and the log can be opened
    (`ready`); and the log's first record, `first`, is written under `bound`, so that a log that takes no record (a
    full device) stops the process before anything is spent — a queued run holds its records until its first step."""
    import asyncio

    from aeon.entrypoints.durable.factory import process

    container = build_container(settings)
    stack.enter_context(process().composer.lent_tools(settings, stack.enter_context(tools_opened(container))))

    async def checked() -> None:
        async with opened(container, container.event_log, container.llm):
            await ready(container)
            container.event_log().bind(bound)
            container.event_log().emit(first)

    asyncio.run(checked())


async def ready(container: Container, plan: Plan | None = None) -> LLMPort:
    """The checks every front door makes before a run may spend anything, in one place so that no door skips one:
    the model can run here (a model file given is there; the local model's extra is installed, when the run will
    call the model: `calls_model`, given the run's `plan`), and the event log can be opened — its next
    record must then be written, or the run stops with EventLogUnavailable before its first LLM request (a durable
    run's first execution opens its own log the same way). Returns the model client. The caller opens the
    container's log and model first (`opened`); the tools are registered before (each door needs them to check a
    plan: `tools_opened`, `container.tools()`), and a durable run's system database is opened before it starts
    (`ops.engine_for`). Raises ConfigurationError or EventLogUnavailable."""
    llm = await provided(container.llm)
    if problem := preflight(llm, calls_model=calls_model(plan, evaluate=container.settings().run.evaluate)):
        raise ConfigurationError(problem)
    container.event_log().open()
    return llm


def checks(container: Container, request: str, status: Callable[[str], None] | None) -> Preflight:
    """The run use case's preflight on `container`: its resources opened, the checks of `ready`
    (ConfigurationError, EventLogUnavailable), which model answers said to `status`. An in-process run executes
    with them open, each closed once on the way out; a durable run's are closed before it starts (it opens its
    own, and traces in the container that runs it: no tracer is opened here then)."""

    @contextlib.asynccontextmanager
    async def checked(plan: Plan | None, durable: bool) -> AsyncIterator[Checked]:
        found = Checked()
        if durable:
            async with opened(container, container.event_log, container.llm):
                found.note = said_model(await ready(container, plan), request, status)
            yield found
            return
        async with opened(container):
            found.note, log = said_model(await ready(container, plan), request, status), container.event_log()
            yield found
        found.lost = log.lost()

    return checked


def in_process(container: Container, around: Around | None = None) -> InProcessRuns[Awaitable[RunResult]]:
    """The DurableRuns port without a record on `container`: each run by the orchestrator it builds, with the run's
    approver as its constructor argument, inside `around` (the CLI's signal handling)."""

    async def execute(
        run_id: str,
        request: str,
        plan: str | None,
        progress: ProgressPort | None,
        approver: ApproverPort | None,
        thread: ThreadContext | None = None,
        /,
    ) -> RunResult:
        made: Any = container.orchestrator(approver=approver) if approver is not None else container.orchestrator()
        orchestrator: Orchestrator = await made if inspect.isawaitable(made) else made
        run = orchestrator.run(request, plan=plan_of(plan), correlation_id=run_id, thread=thread)
        return await (around(run) if around is not None else run)

    return InProcessRuns(execute)


def runs_for(
    container: Container,
    request: str,
    *,
    durable: Callable[[], Starts],
    status: Callable[[str], None] | None = None,
    forced: Callable[[], None] = lambda: None,
    around: Around | None = None,
    configured: bool | None = None,
) -> Runs:
    """The run use case on `container` (its tools registered): in process on it, or durable by `durable()`.
    `configured`: whether the run is durable when nothing is said (default: the config's durable.enabled)."""
    enabled = container.settings().durable.enabled if configured is None else configured
    preflight = checks(container, request, status)
    made = in_process(container, around)
    return Runs(container.tools(), enabled, preflight, made, durable, forced, threads=container.threads)


def plan_problems(settings: Settings, doc: Any) -> list[str]:
    """Every problem a run would find in a plan document, against the configured tools, redacted (a problem may
    quote an argument)."""
    return plan_report(settings, doc)[0]


def plan_report(settings: Settings, doc: Any) -> tuple[list[str], list[str]]:
    """The plan document's problems, and the policy's warnings on its data flow (runs.plan_report), redacted."""
    with tools_opened(build_container(settings)) as tools:  # its MCP servers stop once they have listed theirs
        specs = tools.list()
    return report(doc, specs, policy_of(settings.policy), redactor_for(settings))
