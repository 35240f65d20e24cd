"""Hand-written plans (`aeon run --plan`, `aeon validate`): every problem a run would find, each with its step id."""

from __future__ import annotations

import difflib
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from aeon.application.errors import InputError
from aeon.application.plans.flow import flagged, warning_lines
from aeon.application.plans.semantic_validation import deterministic_issues
from aeon.application.plans.validation import Problem, build_plan, structural_problems, tool_problems
from aeon.application.policy import Policy
from aeon.domain.evaluation import IssueType
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.tools import ToolSpec

_STATUSES = ", ".join(s.value for s in StepStatus)


def plan_from_document(doc: Any, *, source: str, tools: Mapping[str, ToolSpec] | None = None) -> Plan:
    """A hand-written plan from a parsed JSON/YAML document; structural problems refuse it (InputError).

    A step status outside the state machine is structural here. Given the registered `tools`, a step naming a tool
    that is not among them refuses the plan too: its author named the tool on purpose, so a guess by repair or an
    LLM fallback standing in for it would hide the mistake. Argument and dependency problems are left to the run:
    they are flagged as step errors, repaired, fall back or leave the step invalid.
    """
    problems = structural_problems(doc) + status_problems(doc) + long_number_problems(doc)
    if problems:
        raise InputError(f"plan {source} is invalid: {'; '.join(str(p) for p in problems)}")
    plan = build_plan(doc)
    missing = [] if tools is None else unregistered_tools(plan.steps, tools)
    if missing:
        raise InputError(f"plan {source}: {'; '.join(missing)}")
    return plan


def unregistered_tools(steps: Sequence[PlanStep], tools: Mapping[str, ToolSpec]) -> list[str]:
    """One line per step naming an unregistered tool, with the registered names closest to it."""
    out = []
    for step in steps:
        if step.tool is not None and step.tool not in tools:
            close = difflib.get_close_matches(step.tool, list(tools), n=3, cutoff=0.5)
            hint = f"closest: {', '.join(close)}" if close else f"registered: {', '.join(sorted(tools)) or 'none'}"
            out.append(f"step {step.step_id!r} names tool {step.tool!r}, which is not registered ({hint})")
    return out


def validate_document(doc: Any, tools: Mapping[str, ToolSpec]) -> list[Problem]:
    """Every problem of a plan document, in step order: structure, status, tool, arguments, dependencies.

    Dependency problems (cycles, unknown steps, steps that run later) are semantic validation's deterministic
    facts, the ones every run reports; unregistered tools are reported once, by the tool check.
    """
    problems = structural_problems(doc) + status_problems(doc) + long_number_problems(doc)
    steps = _readable_steps(doc)
    for step in steps:
        problems.extend(Problem(step_id=step.step_id, message=m, structural=False) for m in tool_problems(step, tools))
    for issue in deterministic_issues(Plan(goal="", steps=steps), tools):
        if issue.type is not IssueType.HALLUCINATION:
            sid = str((issue.location or {}).get("step_id"))
            problems.append(Problem(step_id=sid, message=issue.description.removeprefix(f"step {sid} ")))
    order = {step.step_id: i for i, step in reversed(list(enumerate(steps)))}
    return sorted(problems, key=lambda p: order.get(p.step_id or "", -1))  # plan order; stable within a step


def flow_warnings(doc: Any, tools: Mapping[str, ToolSpec], policy: Policy) -> list[str]:
    """What the policy would ask a person about before the plan runs: a consequential call written from untrusted
    data, or an argument whose `$from` takes an untrusted output (one line per step and argument)."""
    plan = Plan(goal="", steps=_readable_steps(doc))
    return warning_lines(flagged(plan, lambda step: tools.get(step.tool or ""), policy))


def status_problems(doc: Any) -> list[Problem]:
    """Steps whose `status` is not a state of the step state machine."""
    steps = doc.get("steps") if isinstance(doc, dict) else None
    out = []
    for i, raw in enumerate(steps if isinstance(steps, list) else []):
        status = raw.get("status") if isinstance(raw, dict) else None
        if status is not None and status not in StepStatus._value2member_map_:
            sid = raw.get("step_id")
            where = sid if isinstance(sid, str) else f"#{i + 1}"
            out.append(Problem(step_id=where, message=f"status {status!r} is not one of {_STATUSES}"))
    return out


def long_number_problems(doc: Any) -> list[Problem]:
    """Step arguments holding an int of more digits than Python writes as text (a plan given as data, not a file,
    which would have been refused when read): nothing could log, show or send it."""
    steps = doc.get("steps") if isinstance(doc, dict) else None
    out = []
    for i, raw in enumerate(steps if isinstance(steps, list) else []):
        args = raw.get("args") if isinstance(raw, dict) else None
        for where in _long_ints(args, "args"):
            sid = raw.get("step_id")
            limit = sys.get_int_max_str_digits()
            message = (
                f"{where} is an integer of more than the {limit} digits Python writes as a number; give it as a string"
            )
            out.append(Problem(step_id=sid if isinstance(sid, str) else f"#{i + 1}", message=message))
    return out


def _long_ints(value: Any, where: str) -> list[str]:
    """Where `value` holds such an int; walked with a stack, as deep as the data goes."""
    found, stack = [], [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, f"{at}.{k}") for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in reversed(list(enumerate(item))))
        elif isinstance(item, int) and item.bit_length() > 14_000 and not _writable(item):
            found.append(at)
    return found


def _writable(number: int) -> bool:
    try:
        str(number)
    except ValueError:
        return False
    return True


def _readable_steps(doc: Any) -> list[PlanStep]:
    """The steps that have a string id, as far as they can be read: enough to check tools and dependencies."""
    steps = doc.get("steps") if isinstance(doc, dict) else None
    out = []
    for raw in steps if isinstance(steps, list) else []:
        if not isinstance(raw, dict) or not isinstance(raw.get("step_id"), str):
            continue
        tool, args, deps = raw.get("tool"), raw.get("args"), raw.get("dependencies")
        out.append(
            PlanStep(
                step_id=raw["step_id"],
                description=str(raw.get("description", "")),
                tool=tool if isinstance(tool, str) else None,
                agent=raw.get("agent"),
                args=args if isinstance(args, dict) else {},
                dependencies=[d for d in deps if isinstance(d, str)] if isinstance(deps, list) else [],
            )
        )
    return out
