"""The composition of a durable run: Aeon's container builds the orchestrator the DBOS workflow
(adapters/durable/workflow.py) runs. One ContainerComposer per process holds what every run it executes shares —
the settings of a recorded config, its tools, the model client — and the engine on the system database."""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import itertools
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

import aeon.adapters.durable.workflow  # noqa: F401 — registers the run workflow before any engine launches
from aeon.adapters.durable.approval import DurableApprover
from aeon.adapters.durable.engine import DurableEngine, QueueLimits, database_url
from aeon.adapters.durable.ops import executor_name
from aeon.adapters.durable.replay_log import ReplayLog, mend_tail, records_written
from aeon.adapters.durable.runtime import Built, DurableRuntime, RunSpec, held, hold
from aeon.adapters.durable.steps import DurableCheckpoint, DurableLLM, DurableTools, Recorder, Supplier
from aeon.adapters.llm.providers import PROVIDERS
from aeon.adapters.tools.composite import CompositeTools
from aeon.application.ports import LLMPort, ToolPort
from aeon.application.runs import schema_problem
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.container import Container, build_container, opened, provided
from aeon.entrypoints.secrets import redactor_for


class ContainerComposer:
    """Builds each durable run from its recorded config with Aeon's container; settings, tools and the model client
    are built once per process and config (a batch builds thousands of runs from one)."""

    def __init__(self) -> None:
        self._settings: dict[str, Settings] = {}
        self._tools: dict[str, CompositeTools] = {}
        self._models: dict[str, LLMPort] = {}
        self._lent: dict[str, Container] = {}

    @contextlib.asynccontextmanager
    async def build(
        self, spec: RunSpec, runtime: DurableRuntime, *, rerun_unsafe: bool, supplied: Supplier | None
    ) -> AsyncIterator[Built]:
        """The run's orchestrator from Aeon's container, its LLM, tools and checkpoints made steps, its log
        replay-aware; the container's resources open for the run and each closed once after it, however it ends.
        The log is read for what it already holds of the run only when the run turns out to execute again."""
        settings, registry = self.configured(spec.config, spec.overrides)
        container = self._lent.get(spec.run_id) or build_container(settings)
        path = settings.log.path
        count = None
        if path is not None:
            mend_tail(path)
            count = partial(records_written, path, spec.run_id, keep=settings.log.keep)
        shared = self.shared_model(settings, container)  # the process's: not opened, nor closed, with this run
        resources = (container.event_log, container.tracer) + ((container.llm,) if shared is None else ())
        async with opened(container, *resources):
            log = ReplayLog(container.event_log(), count=count)
            recorder = Recorder(log)
            redactor = container.redactor()
            model = shared if shared is not None else await provided(container.llm)
            defer = settings.durable.defer_answers_under
            tools = DurableTools(
                registry,
                recorder,
                idempotent=registry.is_idempotent,
                pure=registry.is_pure,
                recorded=lambda: runtime.recorded(spec.run_id),
                rerun_unsafe=rerun_unsafe,
                supplied=supplied,
                redactor=redactor,
            )
            approver = DurableApprover(
                inline=runtime.inline.get(spec.run_id),
                waiting=partial(runtime.waits, spec.run_id),
                redactor=redactor,
                before_wait=recorder.flush,
                send=runtime.claimed,
            )
            ids = itertools.count(1)  # the same ids when the run is re-executed: a constructor argument
            made: Any = container.orchestrator(  # the durable pieces are the orchestrator's arguments, not overrides
                llm=DurableLLM(model, recorder, redactor=redactor, defer=defer),
                tools=tools,
                checkpoint=DurableCheckpoint(recorder, redactor=redactor),
                approver=approver,
                logger=log,
                progress=runtime.progress.get(spec.run_id),
                new_id=lambda: f"{spec.run_id}.{next(ids)}",
            )
            orchestrator = await made if inspect.isawaitable(made) else made
            yield Built(orchestrator=orchestrator, log=log, recorder=recorder)

    def shared_model(self, settings: Settings, container: Container) -> LLMPort | None:
        """The model client shared by every run the process executes (a batch, a worker), one per model
        configuration, so the local llama-server starts once and stays warm — its KV cache keeps the prompt
        prefixes all runs share; None for the scripted model, which answers each run from the start of its script,
        so each run gets its own (a container resource, closed after the run). A shared client lives as long as the
        process (the local server is stopped by its atexit hook)."""
        if PROVIDERS[settings.llm.adapter].per_run:
            return None
        key = settings.llm.model_dump_json()
        if key not in self._models:
            self._models[key] = container.llm_adapter()
        return self._models[key]

    def settle(self, spec: RunSpec, settings: Settings, container: Container | None = None) -> None:
        """`settings`, which the command that starts run `spec` here loaded, stand for its recorded config and
        overrides in this process: they are not loaded a second time; and the command's `container` builds the
        run (its resources opened and closed by the run; none of its providers changed): one per process."""
        self._settings.setdefault(_settings_key(spec.config, spec.overrides), settings)
        if container is not None:
            self._lent[spec.run_id] = container

    def configured(self, config: str | None, overrides: dict[str, Any]) -> tuple[Settings, CompositeTools]:
        """The settings of a run's recorded config and overrides (loaded once per process), and its tools."""
        key = _settings_key(config, overrides)
        if key not in self._settings:
            self._settings[key] = load_settings(Path(config) if config else None, overrides)
        settings = self._settings[key]
        return settings, self.shared_tools(settings)

    def shared_tools(self, settings: Settings) -> CompositeTools:
        """The tools of every run the process executes with the same tools config: its tools modules are imported
        once and its MCP servers start once per process — a batch, a worker — and stop when it exits (or, lent by
        `aeon run --durable`, when that command ends)."""
        key = _tools_key(settings)
        if key not in self._tools:
            self._tools[key] = build_container(settings).tools()
        return self._tools[key]

    @contextlib.contextmanager
    def lent_tools(self, settings: Settings, tools: CompositeTools) -> Iterator[None]:
        """Meanwhile the runs of `settings` this process executes use `tools`: `aeon run --durable` lends those it
        checked the plan against, so their MCP servers start once, and stop with the command."""
        key = _tools_key(settings)
        before = self._tools.get(key)
        self._tools[key] = tools
        try:
            yield
        finally:
            if before is None:
                del self._tools[key]
            else:
                self._tools[key] = before

    def recorded_input(self, spec: RunSpec) -> str:
        settings, _ = self.configured(spec.config, spec.overrides)
        redactor = redactor_for(settings)
        plan = redactor.json(spec.plan.encode()).decode() if spec.plan else None
        shown = msgspec.structs.replace(
            spec, request=redactor.text(spec.request), plan=plan, overrides=redactor.data(spec.overrides)
        )
        return msgspec.json.encode(shown).decode()

    def tools(self, spec: RunSpec) -> CompositeTools:
        return self.configured(spec.config, spec.overrides)[1]

    def args_problem(self, tools: ToolPort, tool: str, args: dict[str, Any]) -> str | None:
        return schema_problem(tools, tool, args)


def runtime() -> DurableRuntime:
    """The process's durable runtime, made on first use with Aeon's composition."""
    with contextlib.suppress(AssertionError):
        return held()
    return hold(DurableRuntime(ContainerComposer()))


def composer() -> ContainerComposer:
    compose = runtime().compose
    assert isinstance(compose, ContainerComposer)
    return compose


def _settings_key(config: str | None, overrides: dict[str, Any]) -> str:
    return msgspec.json.encode([config, overrides]).decode()


def _tools_key(settings: Settings) -> str:
    dump = [settings.tools.model_dump(mode="json"), str(settings.config_dir), _opened(settings)]
    return hashlib.sha256(msgspec.json.encode(dump)).hexdigest()


def _opened(settings: Settings) -> list[Any]:
    """What the tools config's dump hides and still tells two configs apart: the MCP servers' env and headers."""

    def shown(values: dict[str, Any]) -> dict[str, str | None]:
        return {k: v.get_secret_value() if v is not None else None for k, v in values.items()}

    return [[shown(s.env), shown(s.headers)] for s in settings.tools.mcp]


def system_database(settings: Settings) -> str:
    return database_url(settings.durable.database_url, Path.cwd())


def engine_for(
    settings: Settings,
    kind: str,
    *,
    name: str | None = None,
    listen: tuple[str, ...] = (),
    queues: dict[str, QueueLimits] | None = None,
    lease: bool = False,
) -> DurableEngine:
    """This process's engine on the configured system database (`with engine_for(...) as engine:`). `lease`: it
    serves the batch queue, so it keeps a lease and takes over the runs of serving processes that died."""
    engine = DurableEngine(
        system_database(settings),
        executor_id=executor_name(kind, name),
        listen=listen,
        queues=queues,
        grace=settings.durable.recover_after_seconds if lease else None,
    )
    runtime().engine = engine
    return engine


def spec_for(
    request: str, config: Path | None, overrides: dict[str, Any], *, log_path: Path | None, plan: str | None
) -> RunSpec:
    """A run's recorded input: paths made absolute, so any process in any folder can execute it."""
    fixed = dict(overrides)
    if log_path is not None:
        fixed["log.path"] = str(log_path.resolve())
    return RunSpec(
        run_id=str(uuid.uuid4()),
        request=request,
        started_at=datetime.now(UTC).isoformat(),
        config=str(config.resolve()) if config is not None else None,
        overrides=fixed,
        plan=plan,
    )
