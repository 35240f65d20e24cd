"""The one piece of a durable run that needs Aeon's container: ContainerFactory, the RunFactory the durable adapter
(adapters/durable/composer.py) is given, builds a run's settings, tools, model and orchestrator."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aeon.adapters.durable.composer import RunParts
from aeon.adapters.durable.process import DbosProcess
from aeon.adapters.durable.settings import DurableSettings
from aeon.adapters.llm.providers import PROVIDERS
from aeon.adapters.tools.composite import CompositeTools
from aeon.application.ports import LLMPort
from aeon.application.redaction import Redactor
from aeon.domain.evaluation import ConvergenceCriteria
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import Settings, kernel_settings
from aeon.entrypoints.container import Container, build_container, opened, provided
from aeon.entrypoints.secrets import redactor_for


class ContainerFactory:
    """Settings loaded with Aeon's layers, containers built from them; the model client of every run the process
    executes shared per model configuration (see shared_model)."""

    def __init__(self) -> None:
        self._models: dict[str, LLMPort] = {}

    def load(self, config: str | None, overrides: dict[str, Any]) -> Settings:
        return load_settings(Path(config) if config else None, overrides)

    def durable(self, settings: Settings) -> DurableSettings:
        return settings.durable

    def log_file(self, settings: Settings) -> tuple[Path | None, int]:
        return settings.log.path, settings.log.keep

    def judging(self, settings: Settings) -> tuple[bool, ConvergenceCriteria]:
        run = kernel_settings(settings)
        return run.evaluate, run.criteria

    def redactor(self, settings: Settings) -> Redactor:
        return redactor_for(settings)

    def tools_key(self, settings: Settings) -> str:
        return settings.tools.key(settings.config_dir)

    def tools(self, settings: Settings) -> CompositeTools:
        return build_container(settings).tools()

    @contextlib.asynccontextmanager
    async def open(self, settings: Settings, container: Container | None) -> AsyncIterator[RunParts]:
        container = container or build_container(settings)
        shared = self.shared_model(settings, container)  # the process's: not opened, nor closed, with this run
        resources = (container.event_log, container.tracer) + ((container.llm,) if shared is None else ())
        async with opened(container, *resources):
            model = shared if shared is not None else await provided(container.llm)
            yield RunParts(container.event_log(), container.redactor(), model, container.orchestrator)

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


def process() -> DbosProcess:
    """This process's durable side, composed with Aeon's container (the first call registers it)."""
    return DbosProcess(ContainerFactory())
