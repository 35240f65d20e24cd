"""The rules a run follows at every front door: durable or not, whether it may need a person's decision, the check an
edited tool call gets, the note when a scripted model answers something else, and a call's caps under the config's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aeon.application.errors import InputError
from aeon.application.ports import ToolPort
from aeon.domain.llm import ModelInfo
from aeon.domain.plan import Plan
from aeon.domain.tools import ToolSpec


def schema_problem(tools: ToolPort, tool: str, args: dict[str, Any]) -> str | None:
    """Why `args` do not fit `tool`'s input schema, or None: the argument check every step's call gets (the kernel
    checks an edited call with it again)."""
    from aeon.application.plans.validation import args_problems

    spec = tools.get(tool)
    if spec is None:
        return f"tool {tool!r} is not registered"
    return "; ".join(args_problems(spec, args)) or None


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
