"""The rules a run follows at every front door: durable or not (and whether another process can rebuild it), whether
it may need a person's decision, the caps as overrides (a call's under the config's), which model answers and the note
when a scripted model answers something else."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any

from aeon.application.errors import InputError, UsageError
from aeon.application.plans.plan_documents import flow_warnings, plan_from_document, validate_document
from aeon.application.policy import Policy
from aeon.application.ports import LLMPort, ToolPort
from aeon.application.redaction import Redactor
from aeon.domain.llm import ModelInfo
from aeon.domain.plan import Plan
from aeon.domain.tools import ToolSpec

NEEDS_RECORD = (
    "a tool call in this run may need approval and nobody can be asked here: only a durable run can wait on the "
    "record for aeon approve / aeon deny"
)


def durable_wanted(said: bool | None, *, configured: bool, needs_record: bool) -> bool:
    """The one rule every front door follows for "durable or not": what the caller said (`--durable/--no-durable`,
    `durable=` of the Python API and of `aeon mcp`'s run), else the config's `durable.enabled`. A run that may need a
    decision nobody here can give (`needs_record`) is durable unless the caller said it must not be: that is refused
    (InputError, exit 2) before anything starts, never overridden."""
    if said is not None:
        if not said and needs_record:
            raise InputError(f"{NEEDS_RECORD}; it was asked not to be durable (drop --no-durable / durable: false)")
        return said
    return configured or needs_record


def may_need_approval(specs: Sequence[ToolSpec], plan: Plan | None) -> bool:
    """Whether a run may call a tool that needs approval: a registered tool says so, or a step of the given plan."""
    return any(s.requires_approval for s in specs) or (
        plan is not None and any(s.requires_approval for s in plan.steps)
    )


def plan_given(doc: Any, source: str, tools: ToolPort) -> Plan:
    """A plan a caller gives (a file, a mapping, a tool argument: `source` names it), checked as a run checks it
    against the registered `tools` (InputError naming each problem)."""
    return plan_from_document(doc, source=source, tools={spec.name: spec for spec in tools.list()})


def plan_report(doc: Any, specs: Sequence[ToolSpec], policy: Policy, redactor: Redactor) -> tuple[list[str], list[str]]:
    """What `aeon validate` and `aeon mcp`'s validate report on a plan document: every problem a run would find
    against the tools `specs`, and the `policy`'s warnings on its data flow (flow_warnings), redacted (a problem may
    quote an argument)."""
    by_name = {spec.name: spec for spec in specs}
    found, warnings = validate_document(doc, by_name), flow_warnings(doc, by_name, policy)
    return [redactor.text(str(p)) for p in found], [redactor.text(w) for w in warnings]


def calls_model(plan: Plan | None, *, evaluate: bool) -> bool:
    """Whether the run will ask the model something, decided simply: it will, unless evaluation is off
    (run.evaluate: false: no profile, no evaluation, no refinement) and a plan is given whose steps all name a tool
    (an `agent: llm` step is a model call). A tool call that needs repairing may still call it then."""
    return evaluate or plan is None or any(step.tool is None for step in plan.steps)


def scripted_mismatch(info: ModelInfo, request: str) -> str | None:
    """A scripted model answers what its script was written for, whatever is asked: say so when they differ."""
    scripted = info.scripted_request
    if not scripted or " ".join(request.split()).casefold() == " ".join(scripted.split()).casefold():
        return None
    return f"note: this scripted model answers {scripted!r} whatever is asked; your request only reaches its prompts"


def capped(name: str, asked: int | None, most: int, notes: list[str]) -> int | None:
    """What a caller asked for a cap (`ttl`, `max_llm_calls`), never above the config's `most` (said in `notes`)."""
    if asked is not None and asked > most:
        notes.append(f"{name} {asked} was asked; the server's config caps it at {most}")
        return most
    return asked


def run_overrides(
    *,
    ttl: int | None = None,
    max_llm_calls: int | None = None,
    max_tokens: int | None = None,
    max_cost: float | None = None,
    max_seconds: float | None = None,
    log_file: str | None = None,
) -> dict[str, Any]:
    """The settings a run's own options override (an option not given overrides nothing)."""
    caps = {"max_llm_calls": max_llm_calls, "max_tokens": max_tokens, "max_cost": max_cost, "max_seconds": max_seconds}
    overrides: dict[str, Any] = {"run.ttl": ttl, "run.ttl_given": True} if ttl is not None else {}
    overrides |= {f"run.{name}": value for name, value in caps.items() if value is not None}
    if log_file is not None:
        overrides["log.path"] = log_file
    return overrides


def describe_llm(info: ModelInfo) -> str:
    """The first progress line: which model answers, through which adapter, in which dialect and why (and with which
    prompt profile, when not base)."""
    if info.adapter == "scripted":
        return f"scripted model from {info.dialect_source}"
    where = f" at {info.base_url}" if info.base_url else ""
    said = f"model {info.model} via {info.adapter}{where} · dialect {info.dialect} ({info.dialect_source})"
    # the prompt profile, when it is not the base one every run had before profiles (README "Prompt profiles")
    return said if info.profile == "base" else f"{said} · {info.profile} prompts ({info.profile_source})"


def said_model(llm: LLMPort, request: str, status: Callable[[str], None] | None) -> str | None:
    """Say which model answers (to `status`), and a note when a scripted model answers something else."""
    info = llm.describe()
    note = scripted_mismatch(info, request)
    for line in (describe_llm(info), note):
        if line and status is not None:
            status(line)
    return note


def rebuildable(
    tools: Iterable[object], model: object, *, said: bool | None = None, streamed: bool = False, entry: str = "aeon.run"
) -> bool:
    """Whether another process can rebuild the run: not streamed, its tools modules (or their names), its model
    named. UsageError when the caller said durable (`said`) for a run that cannot be: streamed, or a model object."""
    named_model = model is None or isinstance(model, str)
    if said and streamed:
        raise UsageError(f"{entry}() does not stream a durable run yet: use aeon.run or aeon.arun with durable=True")
    if said and not named_model:
        raise UsageError("a durable run names its model (model='openai:…' or the config's llm section), not an object")
    named = (t.__name__ if isinstance(t, ModuleType) else t for t in tools)
    return not streamed and named_model and all(isinstance(n, str) and n != "__main__" for n in named)


def module_names(tools: Iterable[object]) -> list[str]:
    """The tools of a durable run as tools.modules entries, which any process that finishes the run imports."""
    names = []
    for item in tools:
        name = item.__name__ if isinstance(item, ModuleType) else item
        if not isinstance(name, str) or name == "__main__":
            raise UsageError(
                f"a durable run is finished by whatever process resumes it, which imports its tools again: give them "
                f"as modules it can import by name (or tools.modules entries), not {item!r:.60}"
            )
        names.append(name)
    return names
