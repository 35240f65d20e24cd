"""Each adapter from its own settings section, field by field (mypy checks each one): the tools and their MCP
servers, the log, the tracer, and what the kernel needs (RunSettings). The container's providers call these."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.telemetry import build_tracer
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.composite import CompositeTools
from aeon.adapters.tools.loader import load_tool_modules
from aeon.adapters.tools.mcp import McpServerConfig, McpTools, ToolFlags
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.kernel.orchestrator import RunSettings
from aeon.application.ports import (
    TracerPort,
)
from aeon.application.redaction import Redactor
from aeon.domain.evaluation import ConvergenceCriteria
from aeon.domain.ledger import ModelPrice
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.config.sections import LogSettings, OtelSettings
from aeon.entrypoints.config.tools import McpServerSettings, ToolsSettings


def build_tools(tools: ToolsSettings, *, search: Sequence[Path] = (), max_seconds: float | None = None) -> ToolRegistry:
    """The registry: built-ins, then the tools of each module, each import bounded by tools.import_timeout and by
    run.max_seconds (importing is part of what the run's time cap promises to bound)."""
    registry = ToolRegistry(timeout=tools.timeout)
    if tools.builtins:
        register_builtins(registry)
    bound = min(tools.import_timeout, max_seconds) if max_seconds is not None else tools.import_timeout
    load_tool_modules(registry, tools.modules, search=search, import_timeout=bound)
    return registry


def open_tools(
    registry: ToolRegistry,
    tools: ToolsSettings,
    redactor: Redactor,
    *,
    max_seconds: float | None = None,
    status: Callable[[str], None] | None = None,
) -> Iterator[CompositeTools]:
    """The run's ToolPort: the registry's tools, then the tools of each MCP server of tools.mcp, which start here —
    when the tools are first needed, so `aeon --version` starts nothing — and stop when the container shuts down,
    or at interpreter exit for a container nobody shuts down (one that is only dropped leaves them running for
    whoever holds its tools). A server that cannot start is a ConfigurationError naming it; `status` hears which
    server tools were skipped and why."""
    servers = McpTools([mcp_server(s) for s in tools.mcp], timeout=tools.timeout, redactor=redactor, warn=status)
    try:
        servers.start(start_limit=max_seconds)
        composite = CompositeTools(registry, servers)
        for name, needed in tools.approval.items():  # Python and MCP tools alike, over what each said
            composite.require_approval(name, needed)
    except BaseException:
        servers.close()
        raise
    try:
        yield composite
    except GeneratorExit:  # collected, not shut down: the tools may still be in use (run_scope's orchestrator)
        return
    servers.close()


def mcp_server(server: McpServerSettings) -> McpServerConfig:
    """One tools.mcp entry as the adapter's config, field by field; secrets opened here, for the server only."""
    return McpServerConfig(
        name=server.name,
        command=server.command,
        args=tuple(server.args),
        env={k: v.get_secret_value() for k, v in server.env.items() if v is not None},
        url=server.url,
        headers={k: v.get_secret_value() for k, v in server.headers.items() if v is not None},
        include=tuple(server.include) if server.include is not None else None,
        exclude=tuple(server.exclude),
        prefix=server.prefix,
        timeout=server.timeout,
        start_timeout=server.start_timeout,
        flags=ToolFlags(requires_approval=server.requires_approval, idempotent=server.idempotent),
        overrides={
            name: ToolFlags(requires_approval=f.requires_approval, idempotent=f.idempotent)
            for name, f in server.overrides.items()
        },
    )


def tool_folders(settings: Settings) -> list[Path]:
    """Where tools.modules are looked for first: the config file's folder, then the working directory."""
    return list(dict.fromkeys(d for d in (settings.config_dir, Path.cwd()) if d is not None))


def kernel_settings(settings: Settings) -> RunSettings:
    """What the kernel needs of the validated settings, field by field (mypy checks each one)."""
    run, criteria = settings.run, settings.convergence
    return RunSettings(
        ttl=run.ttl,
        max_llm_calls=run.max_llm_calls,
        max_tokens=run.max_tokens,
        max_seconds=run.max_seconds,
        max_plan_steps=run.max_plan_steps,
        llm_max_tokens=settings.llm.max_tokens,
        context_window=settings.llm.context_window,
        evaluate=run.evaluate,
        ttl_given=run.ttl_given,
        approval_timeout=run.approval_timeout,
        output_check=settings.tools.output_check,
        max_cost=run.max_cost,
        prices={model: ModelPrice(**price.model_dump()) for model, price in settings.prices.items()},
        criteria=ConvergenceCriteria(
            min_completeness=criteria.min_completeness,
            min_coherence=criteria.min_coherence,
            max_severity=criteria.max_severity,
            require_consistency=criteria.require_consistency,
        ),
    )


def open_event_log(log: LogSettings, redactor: Redactor) -> Iterator[JsonlEventLog]:
    """The run's log, closed (flushed, fsynced) at shutdown. The file opens on the first record, or on `open()`,
    which the CLI calls as its check that the log can be written before anything is spent."""
    event_log = JsonlEventLog(
        log.path,
        redactor=redactor,
        max_string_bytes=log.max_string_bytes,
        max_record_bytes=log.max_record_bytes,
        rotate_bytes=log.rotate_bytes,
        keep=log.keep,
    )
    with event_log:
        yield event_log


def open_tracer(otel: OtelSettings, redactor: Redactor) -> Iterator[TracerPort]:
    """No-op unless otel.enabled: then the OpenTelemetry adapter ([otel] extra); shut down (exported) at the end."""
    tracer = build_tracer(
        enabled=otel.enabled,
        exporter=otel.exporter,
        endpoint=otel.endpoint,
        service_name=otel.service_name,
        capture_content=otel.capture_content,
        redactor=redactor,
    )
    try:
        yield tracer
    finally:
        tracer.shutdown()
