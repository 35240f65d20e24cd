"""How this process builds a durable run from its recorded input: RunComposer, given the one piece that needs Aeon's
container (a RunFactory, made in entrypoints/durable/factory.py) as a constructor argument. What every run the
process executes shares — the settings of a recorded config, its tools — is built once per process and config."""

from __future__ import annotations

import contextlib
import inspect
import itertools
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from aeon.adapters.durable.approval import DurableApprover
from aeon.adapters.durable.replay_log import NumberedLog, ReplayLog, mend_tail, records_written
from aeon.adapters.durable.runtime import Built, RunSpec
from aeon.adapters.durable.settings import DurableSettings
from aeon.adapters.durable.steps import DurableCheckpoint, DurableLLM, DurableTools, Recorder, Supplier
from aeon.application.ports import LLMPort, ToolPort
from aeon.application.redaction import Redactor
from aeon.domain.evaluation import ConvergenceCriteria

if TYPE_CHECKING:
    from aeon.adapters.durable.runtime import DurableRuntime


class ToolRegistry(ToolPort, Protocol):
    """The run's tools as the process registered them: which of them are idempotent, which pure."""

    def is_idempotent(self, name: str) -> bool: ...

    def is_pure(self, name: str) -> bool: ...


@dataclass
class RunParts:
    """What the container opens for one run: its log, its redactor, its model, and the orchestrator's constructor
    (the durable pieces are its arguments: llm, tools, checkpoint, approver, logger, progress, new_id)."""

    log: NumberedLog
    redactor: Redactor
    model: LLMPort
    orchestrator: Callable[..., Any]


class RunFactory(Protocol):
    """Aeon's composition root as the durable adapter sees it. `settings` is opaque here: handed back as loaded."""

    def load(self, config: str | None, overrides: dict[str, Any]) -> Any:
        """The settings of a recorded config file (None: the defaults) and overrides."""
        ...

    def durable(self, settings: Any) -> DurableSettings: ...

    def log_file(self, settings: Any) -> tuple[Path | None, int]:
        """The log file's path (None: no file) and how many rotated files it keeps."""
        ...

    def judging(self, settings: Any) -> tuple[bool, ConvergenceCriteria]:
        """Whether runs are evaluated, and the convergence criteria (what a waiting run's history shows)."""
        ...

    def redactor(self, settings: Any) -> Redactor: ...

    def tools_key(self, settings: Any) -> str:
        """Equal for two settings whose tools are the same (modules, MCP servers with their env and headers)."""
        ...

    def tools(self, settings: Any) -> ToolRegistry: ...

    def open(self, settings: Any, container: Any | None) -> AbstractAsyncContextManager[RunParts]:
        """One run's parts from `container` (None: a new one for `settings`), its resources open meanwhile."""
        ...


class RunComposer:
    """The runtime's Composer: each run built by the factory from its recorded config, made durable here."""

    def __init__(self, factory: RunFactory) -> None:
        self.factory = factory
        self._settings: dict[str, Any] = {}
        self._tools: dict[str, ToolRegistry] = {}
        self._lent: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def build(
        self, spec: RunSpec, runtime: DurableRuntime, *, rerun_unsafe: bool, supplied: Supplier | None
    ) -> AsyncIterator[Built]:
        """The run's orchestrator, its LLM, tools and checkpoints made steps, its log replay-aware; the container's
        resources open for the run and each closed once after it, however it ends. The log is read for what it
        already holds of the run only when the run turns out to execute again."""
        settings, registry = self.configured(spec.config, spec.overrides)
        path, keep = self.factory.log_file(settings)
        count = None
        if path is not None:
            mend_tail(path)
            count = partial(records_written, path, spec.run_id, keep=keep)
        async with self.factory.open(settings, self._lent.get(spec.run_id)) as parts:
            log = ReplayLog(parts.log, count=count)
            recorder, redactor = Recorder(log), parts.redactor
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
            defer = self.factory.durable(settings).defer_answers_under
            made = parts.orchestrator(  # the durable pieces are the orchestrator's arguments, not overrides
                llm=DurableLLM(parts.model, recorder, redactor=redactor, defer=defer),
                tools=tools,
                checkpoint=DurableCheckpoint(recorder, redactor=redactor),
                approver=approver,
                logger=log,
                progress=runtime.progress.get(spec.run_id),
                new_id=lambda: f"{spec.run_id}.{next(ids)}",
            )
            orchestrator = await made if inspect.isawaitable(made) else made
            yield Built(orchestrator=orchestrator, log=log, recorder=recorder)

    def settle(self, spec: RunSpec, settings: Any, container: Any | None = None) -> None:
        """`settings`, which the command that starts run `spec` here loaded, stand for its recorded config and
        overrides in this process: they are not loaded a second time; and the command's `container` builds the
        run (its resources opened and closed by the run; none of its providers changed): one per process."""
        self._settings.setdefault(_settings_key(spec.config, spec.overrides), settings)
        if container is not None:
            self._lent[spec.run_id] = container

    def configured(self, config: str | None, overrides: dict[str, Any]) -> tuple[Any, ToolRegistry]:
        """The settings of a run's recorded config and overrides (loaded once per process), and its tools."""
        key = _settings_key(config, overrides)
        if key not in self._settings:
            self._settings[key] = self.factory.load(config, overrides)
        settings = self._settings[key]
        return settings, self.shared_tools(settings)

    def shared_tools(self, settings: Any) -> ToolRegistry:
        """The tools of every run the process executes with the same tools config: its tools modules are imported
        once and its MCP servers start once per process — a batch, a worker — and stop when it exits (or, lent by
        `aeon run`, when that command ends)."""
        key = self.factory.tools_key(settings)
        if key not in self._tools:
            self._tools[key] = self.factory.tools(settings)
        return self._tools[key]

    @contextlib.contextmanager
    def lent_tools(self, settings: Any, tools: ToolRegistry | None) -> Iterator[None]:
        """Meanwhile the runs of `settings` this process executes use `tools` (None: their own): `aeon run` lends
        those it checked the plan against, so their MCP servers start once, and stop with the command."""
        if tools is None:
            yield
            return
        key = self.factory.tools_key(settings)
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
        redactor = self.factory.redactor(settings)
        plan = redactor.json(spec.plan.encode()).decode() if spec.plan else None
        shown = msgspec.structs.replace(
            spec, request=redactor.text(spec.request), plan=plan, overrides=redactor.data(spec.overrides)
        )
        return msgspec.json.encode(shown).decode()

    def tools(self, spec: RunSpec) -> ToolPort:
        return self.configured(spec.config, spec.overrides)[1]


def _settings_key(config: str | None, overrides: dict[str, Any]) -> str:
    return msgspec.json.encode([config, overrides]).decode()
