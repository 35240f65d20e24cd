"""The composition root: the providers that build the adapters validated settings choose, each from its own typed
section (each adapter package's settings.py builds its adapter). Reading the config is config/'s."""

from __future__ import annotations

import contextlib
import inspect
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar, cast

from aeon.adapters.clock import SystemClock
from aeon.adapters.durable.settings import DurableSettings
from aeon.adapters.eventlog.settings import open_event_log
from aeon.adapters.llm.settings import build as build_llm
from aeon.adapters.llm.settings import open_llm
from aeon.adapters.memory.inmemory import InMemoryKV
from aeon.adapters.telemetry.settings import open_tracer
from aeon.adapters.tools.composite import CompositeTools
from aeon.adapters.tools.settings import build_tools, open_tools
from aeon.application.kernel.orchestrator import Orchestrator, RunSettings
from aeon.application.ports import (
    ApproverPort,
    CheckpointPort,
    ClockPort,
    LLMPort,
    LoggerPort,
    MemoryPort,
    ProgressPort,
    ToolPort,
    TracerPort,
)
from aeon.application.redaction import Redactor
from aeon.application.threads import Threads
from aeon.entrypoints.config.schema import Settings, kernel_settings, tool_folders
from aeon.entrypoints.secrets import run_secrets
from aeon.entrypoints.unwired import containers, providers

T = TypeVar("T")
__all__ = [
    "Container",
    "build_container",
    "opened",
    "provided",
    "run_scope",
    "tools_opened",
]


def _threads(durable: DurableSettings, redactor: Redactor) -> Threads:
    from aeon.adapters.durable.threads import open_threads  # DBOS is imported only by a run of a thread

    return open_threads(durable, redactor)


class Container(containers.DeclarativeContainer):
    """Every provider takes the validated `Settings` (or one of its sections) as it is: typed, never a dict. The
    log, the model client and the tracer are resources: `opened(container)` opens them and closes each once."""

    settings = providers.Dependency(instance_of=Settings)
    # the run's secret values (entrypoints/secrets.py): one Redactor for every exit of the run
    secrets = providers.Singleton(run_secrets, settings)
    redactor = providers.Singleton(Redactor, secrets)

    clock = providers.Singleton(SystemClock)
    event_log = providers.Resource(open_event_log, settings.provided.log, redactor)
    registry = providers.Singleton(
        build_tools,
        settings.provided.tools,
        search=providers.Singleton(tool_folders, settings),
        max_seconds=settings.provided.run.max_seconds,
    )
    # overridden by the CLI with a one-line status printer
    status: providers.Object[Callable[[str], None] | None] = providers.Object(None)
    # the registry's tools and the MCP servers' (started when first needed, stopped at shutdown): the run's ToolPort
    tools = providers.Resource(
        open_tools,
        registry,
        settings.provided.tools,
        redactor,
        max_seconds=settings.provided.run.max_seconds,
        status=status,
    )
    memory = providers.Factory(InMemoryKV)
    progress: providers.Object[ProgressPort | None] = providers.Object(None)  # no display: no events built

    # the adapter llm.adapter names, built by its provider record (no I/O); `llm` is that client as a resource,
    # closed at shutdown
    llm_adapter = providers.Factory(build_llm, settings.provided.llm, logger=event_log, status=status)
    llm = providers.Resource(open_llm, llm_adapter, event_log)

    run_settings = providers.Factory(kernel_settings, settings)
    # overridden by durable runs with the store that keeps each phase boundary's run state
    checkpoint: providers.Object[CheckpointPort | None] = providers.Object(None)
    # who decides on tool calls that need approval: the CLI's terminal prompt, a durable run's message, a callback
    approver: providers.Object[ApproverPort | None] = providers.Object(None)
    tracer = providers.Resource(open_tracer, settings.provided.otel, redactor)

    new_id: providers.Object[Callable[[], str]] = providers.Object(lambda: str(uuid.uuid4()))  # the run ids
    threads = providers.Singleton(_threads, settings.provided.durable, redactor)  # in the system database

    orchestrator = providers.Factory(
        Orchestrator,
        llm=llm,
        tools=tools,
        memory=memory,
        logger=event_log,
        progress=progress,
        clock=clock,
        settings=run_settings,
        checkpoint=checkpoint,
        tracer=tracer,
        redactor=redactor,
        approver=approver,
        new_id=new_id,
    )


async def provided(provider: providers.Provider[T]) -> T:
    """What `provider` gives, awaited when it depends on an async resource (the model client)."""
    value: Any = provider()
    return cast("T", await value) if inspect.isawaitable(value) else cast("T", value)


@contextlib.asynccontextmanager
async def opened(container: Container, *only: providers.Resource[Any]) -> AsyncIterator[Container]:
    """The container with its resources open (log, model client, tracer, tools; or `only` those); on the way out,
    error or not, each one that was opened is closed exactly once, in dependency order (`only`: those, in reverse;
    the others stay with whoever opened them: `aeon run --durable` lends its tools to the durable run)."""
    try:
        if only:
            for resource in only:
                await _maybe(resource.init())
        else:
            await _maybe(container.init_resources())
        yield container
    finally:
        if only:
            for resource in reversed(only):
                await _maybe(resource.shutdown())
        else:
            await _maybe(container.shutdown_resources())


@contextlib.contextmanager
def tools_opened(container: Container) -> Iterator[CompositeTools]:
    """The container's ToolPort, for a command that needs the tools before (or without) the rest: its MCP servers
    are stopped on the way out, however it ends (a container that is shut down later finds them stopped)."""
    try:
        yield container.tools()
    finally:
        container.tools.shutdown()


async def _maybe(result: object) -> None:
    """Await what an async resource's init or shutdown returns; a sync one has already done its work."""
    if inspect.isawaitable(result):
        await result


def run_scope(
    settings: Settings | None = None,
    *,
    run: RunSettings | None = None,
    llm: LLMPort | None = None,
    **ports: Any,
) -> Orchestrator:
    """The orchestrator for one run, built by the container from `settings` (default: the built-in base config),
    with any port replaced by the object given (build_container's arguments; `run` the kernel's settings): what
    tests, benchmarks and embedding programs use. Nothing here is a managed resource: the caller closes what it
    gave, and a model client built from `settings` too (`aclose`); MCP servers started for `settings` (tools not
    given) stop at interpreter exit."""
    container = build_container(settings or Settings(), run_settings=run, **ports)
    orchestrator: Orchestrator = container.orchestrator(llm=llm if llm is not None else container.llm_adapter())
    return orchestrator


def build_container(
    settings: Settings,
    *,
    progress: ProgressPort | None = None,
    status: Callable[[str], None] | None = None,
    tools: ToolPort | None = None,
    llm: LLMPort | None = None,
    approver: ApproverPort | None = None,
    clock: ClockPort | None = None,
    new_id: Callable[[], str] | None = None,
    memory: MemoryPort | None = None,
    logger: LoggerPort | None = None,
    checkpoint: CheckpointPort | None = None,
    tracer: TracerPort | None = None,
    run_settings: RunSettings | None = None,
) -> Container:
    """The container for validated `settings`: each provider reads its typed section; nothing is opened yet. What
    is given is set when the container is created, never patched in afterwards: the run's `progress` display, the
    `status` printer, `tools` already built (the process's, shared by its runs), a model client `llm` the process
    owns (not opened, nor closed, with the container), who decides on tool calls (`approver`), the `clock`, the run
    ids (`new_id`), and any other port."""
    given: dict[str, Any] = {
        "progress": progress, "status": status, "tools": tools, "llm": llm, "approver": approver, "clock": clock,
        "new_id": new_id, "memory": memory, "event_log": logger, "checkpoint": checkpoint, "tracer": tracer,
        "run_settings": run_settings,
    }  # fmt: skip
    chosen = {name: providers.Object(value) for name, value in given.items() if value is not None}
    return Container(settings=providers.Object(settings), **chosen)
