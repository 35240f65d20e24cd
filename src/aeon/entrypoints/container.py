"""The composition root: YAML config layers, validated settings and the adapters chosen by `llm.adapter`."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from aeon.adapters.clock import SystemClock
from aeon.adapters.documents import parse_yaml, read_text
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.anthropic import AnthropicLLM
from aeon.adapters.llm.local import LocalLlamaLLM
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.adapters.memory.inmemory import InMemoryKV
from aeon.adapters.telemetry import build_tracer
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.loader import DEFAULT_IMPORT_TIMEOUT, load_tool_modules
from aeon.adapters.tools.registry import DEFAULT_TIMEOUT, ToolRegistry
from aeon.application.errors import ConfigurationError, InputError
from aeon.application.kernel.orchestrator import Orchestrator, RunSettings
from aeon.application.ports import (
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
from aeon.domain.evaluation import ConvergenceCriteria, Severity
from aeon.domain.ledger import ModelPrice
from aeon.entrypoints.env_markers import EnvUses, forget_replaced, hidden, notes, substitute
from aeon.entrypoints.secrets import run_secrets
from aeon.entrypoints.settings import Settings, validate_settings

# Package data, so a non-editable install finds it: the first layer under every --config file.
BASE_CONFIG = resources.files("aeon.entrypoints").joinpath("base.yaml")
_PATH_KEYS = ("script", "model_path", "cache_dir")

# One static line per port: mypy checks every adapter against its Protocol.
_LLM_ADAPTERS: tuple[type[LLMPort], ...] = (ScriptedLLM, OpenAICompatLLM, AnthropicLLM, LocalLlamaLLM)


def build_tools(
    builtins: bool,
    modules: Sequence[str],
    search: Sequence[Path] = (),
    timeout: float | None = DEFAULT_TIMEOUT,
    import_timeout: float = DEFAULT_IMPORT_TIMEOUT,
    max_seconds: float | None = None,
) -> ToolRegistry:
    """The registry: built-ins, then the tools of each module, each import bounded by tools.import_timeout and by
    run.max_seconds (importing is part of what the run's time cap promises to bound)."""
    registry = ToolRegistry(timeout=timeout)
    if builtins:
        register_builtins(registry)
    bound = min(import_timeout, max_seconds) if max_seconds is not None else import_timeout
    load_tool_modules(registry, modules, search=search, import_timeout=bound)
    return registry


def price_table(prices: Mapping[str, Mapping[str, Any]] | None) -> dict[str, ModelPrice]:
    """The config's `prices` section (validated by the settings schema) as the domain's price table."""
    return {model: ModelPrice(**price) for model, price in (prices or {}).items()}


class Container(containers.DeclarativeContainer):
    config = providers.Configuration(strict=True)
    # overridden with the run's secret values (entrypoints/secrets.py): one Redactor for every exit of the run
    secrets: providers.Object[list[str]] = providers.Object([])
    redactor = providers.Singleton(Redactor, secrets)

    clock = providers.Singleton(SystemClock)
    event_log = providers.Singleton(
        JsonlEventLog,
        config.log.path,
        redactor=redactor,
        max_string_bytes=config.log.max_string_bytes,
        max_record_bytes=config.log.max_record_bytes,
        rotate_bytes=config.log.rotate_bytes,
        keep=config.log.keep,
    )
    # overridden with the config file's folder and the working directory, where tools.modules are looked for first
    tool_folders: providers.Object[list[Path]] = providers.Object([])
    tools = providers.Singleton(
        build_tools,
        builtins=config.tools.builtins,
        modules=config.tools.modules,
        search=tool_folders,
        timeout=config.tools.timeout,
        import_timeout=config.tools.import_timeout,
        max_seconds=config.run.max_seconds,
    )
    memory = providers.Factory(InMemoryKV)
    progress: providers.Object[ProgressPort | None] = providers.Object(None)  # no display: no events built

    # overridden by the CLI with a one-line status printer
    status: providers.Object[Callable[[str], None] | None] = providers.Object(None)

    llm = providers.Selector(
        config.llm.adapter,
        local=providers.Singleton(
            LocalLlamaLLM,
            model_path=config.llm.model_path,
            cache_dir=config.llm.cache_dir,
            ctx_size=config.llm.ctx_size,
            threads=config.llm.threads,
            startup_timeout=config.llm.startup_timeout,
            read_timeout=config.llm.read_timeout,
            max_tokens=config.llm.max_tokens,
            temperature=config.llm.temperature,
            logger=event_log,
            progress=status,
        ),
        scripted=providers.Singleton(ScriptedLLM.from_file, config.llm.script),
        openai=providers.Singleton(
            OpenAICompatLLM,
            base_url=config.llm.base_url,
            model=config.llm.model,
            api_key=config.llm.api_key,
            dialect=config.llm.dialect,
            read_timeout=config.llm.read_timeout,
            max_attempts=config.llm.max_attempts,
            max_tokens=config.llm.max_tokens,
            temperature=config.llm.temperature,
            logger=event_log,
            status=status,
        ),
        anthropic=providers.Singleton(
            AnthropicLLM,
            base_url=config.llm.base_url,
            model=config.llm.model,
            api_key=config.llm.api_key,
            dialect=config.llm.dialect,
            anthropic_version=config.llm.anthropic_version,
            thinking_budget=config.llm.thinking_budget,
            read_timeout=config.llm.read_timeout,
            max_attempts=config.llm.max_attempts,
            max_tokens=config.llm.max_tokens,
            temperature=config.llm.temperature,
            logger=event_log,
            status=status,
        ),
    )

    run_settings = providers.Factory(
        RunSettings,
        ttl=config.run.ttl,
        max_llm_calls=config.run.max_llm_calls,
        max_tokens=config.run.max_tokens,
        max_seconds=config.run.max_seconds,
        max_plan_steps=config.run.max_plan_steps,
        llm_max_tokens=config.llm.max_tokens,
        evaluate=config.run.evaluate,
        ttl_given=config.run.ttl_given,
        max_cost=config.run.max_cost,
        prices=providers.Factory(price_table, config.prices),
        criteria=providers.Factory(
            ConvergenceCriteria,
            min_completeness=config.convergence.min_completeness,
            min_coherence=config.convergence.min_coherence,
            max_severity=providers.Factory(Severity, config.convergence.max_severity),
            require_consistency=config.convergence.require_consistency,
        ),
    )
    # overridden by durable runs with the store that keeps each phase boundary's run state
    checkpoint: providers.Object[CheckpointPort | None] = providers.Object(None)

    # no-op unless otel.enabled: then the OpenTelemetry adapter ([otel] extra), imported only then
    tracer = providers.Singleton(
        build_tracer,
        enabled=config.otel.enabled,
        exporter=config.otel.exporter,
        endpoint=config.otel.endpoint,
        service_name=config.otel.service_name,
        capture_content=config.otel.capture_content,
        redactor=redactor,
    )

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
    )


def run_scope(
    settings: Settings | None = None,
    *,
    run: RunSettings | None = None,
    llm: LLMPort | None = None,
    tools: ToolPort | None = None,
    memory: MemoryPort | None = None,
    logger: LoggerPort | None = None,
    progress: ProgressPort | None = None,
    clock: ClockPort | None = None,
    checkpoint: CheckpointPort | None = None,
    tracer: TracerPort | None = None,
) -> Orchestrator:
    """The orchestrator for one run, built by the container from `settings` (default: the built-in base config),
    with any port replaced by the object given: what tests, benchmarks and embedding programs use."""
    container = build_container(settings or Settings())
    overrides: list[tuple[Any, Any]] = [
        (container.run_settings, run),
        (container.llm, llm),
        (container.tools, tools),
        (container.memory, memory),
        (container.event_log, logger),
        (container.progress, progress),
        (container.clock, clock),
        (container.checkpoint, checkpoint),
        (container.tracer, tracer),
    ]
    for provider, value in overrides:
        if value is not None:
            provider.override(providers.Object(value))
    orchestrator: Orchestrator = container.orchestrator()
    return orchestrator


def load_settings(config_file: Path | None = None, overrides: Mapping[str, Any] | None = None) -> Settings:
    """Merge the built-in base.yaml, the chosen file and CLI overrides, each file's env markers replaced in its
    parsed values (never in its text); validate once, naming the variable behind any value that does not fit."""
    if config_file is not None and not config_file.is_file():
        raise ConfigurationError(f"config file not found: {config_file}")
    raw = providers.Configuration(strict=True)
    uses: EnvUses = {}
    with resources.as_file(BASE_CONFIG) as base:
        for f in [base] if config_file is None else [base, config_file]:
            layer, layer_uses = _layer(f, "the built-in base.yaml" if f == base else str(f))
            if not layer:
                continue  # an empty file (or only comments) overrides nothing
            forget_replaced(uses, layer)
            uses.update(layer_uses)
            raw.from_dict(layer)
    if overrides:
        nested = _nest(overrides)
        forget_replaced(uses, nested)
        raw.from_dict(nested)
    sources = "the built-in base.yaml" + (f", {config_file}" if config_file is not None else "")
    config_dir = config_file.resolve().parent if config_file is not None else None
    data = raw() or {}
    return validate_settings(data, sources=sources, config_dir=config_dir, env_notes=notes(uses), hidden=hidden(uses))


def _layer(f: Path, name: str) -> tuple[dict[str, Any], EnvUses]:
    """One config file as data: parsed, env markers replaced in its values, its own relative paths resolved."""
    literal = _literal_layer(f)
    data, uses = substitute(literal, os.environ, name)
    return _relative_to(data, literal, f), uses


_KINDS = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}


def _literal_layer(source: Path) -> dict[str, Any]:
    """The file as written (env markers not yet replaced): a mapping of sections, or {} for an empty file."""
    try:
        literal = parse_yaml(read_text(source, what="config file"), source=f"config file {source}")
    except InputError as exc:
        raise ConfigurationError(str(exc)) from None
    if literal is None:
        return {}
    if not isinstance(literal, dict):
        kind = _KINDS.get(type(literal), type(literal).__name__)
        raise ConfigurationError(f"config file {source} holds a {kind}; expected a mapping of sections (llm:, run:, …)")
    return literal


def _relative_to(data: dict[str, Any], literal_layer: dict[str, Any], source: Path) -> dict[str, Any]:
    """Paths a config file spells out (LLM script, model file, cache dir) are relative to that file.

    A path that arrives through an environment marker is the user's own, relative to the working directory.
    """
    llm = data.get("llm")
    literal = literal_layer.get("llm") or {}
    if isinstance(llm, dict) and isinstance(literal, dict):
        for key in _PATH_KEYS:
            value, spelled = llm.get(key), literal.get(key)
            from_env = isinstance(spelled, str) and "${" in spelled
            if isinstance(value, str) and value.strip() and not from_env and not Path(value).expanduser().is_absolute():
                llm[key] = str(source.parent / value)
    return data


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = out
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def build_container(
    settings: Settings, *, progress: ProgressPort | None = None, status: Callable[[str], None] | None = None
) -> Container:
    container = Container()
    data = settings.model_dump(mode="python")
    key = settings.llm.api_key
    data["llm"]["api_key"] = key.get_secret_value() if key else None
    container.config.from_dict(data)
    container.secrets.override(providers.Object(run_secrets(settings)))
    folders = dict.fromkeys(d for d in (settings.config_dir, Path.cwd()) if d is not None)
    container.tool_folders.override(providers.Object(list(folders)))
    if progress is not None:
        container.progress.override(providers.Object(progress))
    if status is not None:
        container.status.override(providers.Object(status))
    return container


def preflight(container: Container) -> str | None:
    """A setup problem that stops the run before it starts (the local model's extra not installed), or None."""
    llm = container.llm()
    return llm.preflight() if isinstance(llm, LocalLlamaLLM) else None
