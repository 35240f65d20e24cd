"""What `aeon run` and `aeon validate` do once their input is parsed, shared by the CLI and `aeon mcp`: the caps as
overrides, the container's resources opened for one run and closed once, a plan's problems."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aeon.application.kernel.orchestrator import Orchestrator
from aeon.application.kernel.result import RunResult
from aeon.application.plans.plan_documents import validate_document
from aeon.entrypoints.container import Container, build_container, opened, preflight, provided, tools_opened
from aeon.entrypoints.secrets import redactor_for
from aeon.entrypoints.settings import Settings

Execute = Callable[[Orchestrator], Awaitable[RunResult]]


def run_overrides(
    *,
    ttl: int | None = None,
    max_llm_calls: int | None = None,
    max_cost: float | None = None,
    log_file: str | None = None,
) -> dict[str, Any]:
    """The settings a run's own options override (an option not given overrides nothing)."""
    overrides: dict[str, Any] = {}
    if ttl is not None:
        overrides["run.ttl"] = ttl
        overrides["run.ttl_given"] = True
    if max_llm_calls is not None:
        overrides["run.max_llm_calls"] = max_llm_calls
    if max_cost is not None:
        overrides["run.max_cost"] = max_cost
    if log_file is not None:
        overrides["log.path"] = log_file
    return overrides


def scripted_mismatch(info: dict[str, str], request: str) -> str | None:
    """A scripted model answers what its script was written for, whatever is asked: say so when they differ."""
    scripted = info.get("scripted_request")
    if not scripted or " ".join(request.split()).casefold() == " ".join(scripted.split()).casefold():
        return None
    return f"note: this scripted model answers {scripted!r} whatever is asked; your request only reaches its prompts"


def describe_llm(info: dict[str, str]) -> str:
    """The first progress line: which model answers, through which adapter, in which dialect and why."""
    if info.get("adapter") == "scripted":
        return f"scripted model from {info.get('dialect_source')}"
    where = f" at {info['base_url']}" if info.get("base_url") else ""
    return (
        f"model {info.get('model')} via {info.get('adapter')}{where} · dialect {info.get('dialect')} "
        f"({info.get('dialect_source')})"
    )


async def session(
    container: Container,
    request: str,
    *,
    execute: Execute | None,
    status: Callable[[str], None] | None,
    refuse: Callable[[str], BaseException],
) -> tuple[RunResult | None, str | None]:
    """Open the container's resources, check the model can run (else raise `refuse(problem)`) and the log can be
    written, say which model answers (to `status`), then run (`execute(orchestrator)`) or not (None: a durable
    run executes elsewhere): every resource is closed once on the way out. Returns the result and a note on it."""
    # a durable run traces in the container that runs it: this one opens no tracer then
    async with opened(container) if execute else opened(container, container.event_log, container.llm):
        log, llm = container.event_log(), await provided(container.llm)
        if problem := preflight(llm):
            raise refuse(problem)
        log.open()  # a log that cannot be written stops the run here, before anything is spent
        llm_info = llm.describe()
        if status is not None:
            status(describe_llm(llm_info))
        note = scripted_mismatch(llm_info, request)
        if note and status is not None:
            status(note)
        if execute is None:
            return None, note
        result = await execute(await provided(container.orchestrator))
    if (lost := log.lost()) is not None:  # after the close: its last flush may lose records too
        result = result.with_lost_records(lost)
    return result, note


def plan_problems(settings: Settings, doc: Any) -> list[str]:
    """Every problem a run would find in a plan document, against the configured tools, redacted (a problem may
    quote an argument)."""
    with tools_opened(build_container(settings)) as tools:  # its MCP servers stop once they have listed theirs
        specs = tools.list()
    found = validate_document(doc, {t.name: t for t in specs})
    redactor = redactor_for(settings)
    return [redactor.text(str(p)) for p in found]
