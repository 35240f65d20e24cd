"""Semantic validation rules: the deterministic plan facts, and the advisory issues kept from an evaluation answer."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from aeon.application.errors import missing_field
from aeon.application.plans.references import reference_problems
from aeon.application.schemas import one_line
from aeon.domain.answers import result_of
from aeon.domain.evaluation import ArtifactType, IssueType, Severity, ValidationIssue
from aeon.domain.plan import Plan, StepStatus
from aeon.domain.provenance import fence
from aeon.domain.tools import ToolSpec

MAX_LLM_ISSUES = 4
_OUTPUT_CHARS = 300

VALIDATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "issues": {
            "type": "array",
            "maxItems": MAX_LLM_ISSUES,
            "items": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": [t.value for t in IssueType]},
                    "severity": {"type": "string", "enum": [s.value for s in Severity]},
                    "step_id": {"type": "string"},
                    "description": {"type": "string", "minLength": 1},
                    "repair": {"type": "string"},
                },
                "required": ["type", "severity", "step_id", "description", "repair"],
            },
        }
    },
    "required": ["issues"],
}

_ACTIONS = {
    IssueType.SPECIFICITY: "rewrite_step",
    IssueType.RELEVANCE: "remove_step",
    IssueType.DO_SAY_MISMATCH: "rewrite_step",
    IssueType.HALLUCINATION: "replace_tool",
    IssueType.CONSISTENCY: "logical_correction",
}


# -- plan as the evaluation prompts show it ---------------------------------------------------------------------
def _clip(value: Any) -> str:
    return one_line(value, _OUTPUT_CHARS)


def render_plan(
    plan: Plan,
    results: Mapping[str, Any] | None = None,
    outputs: Mapping[str, str] | None = None,
    *,
    notes: Mapping[str, str] | None = None,
) -> str:
    """One line per step: id, description, tool+args or agent, status, and output or errors once executed. An
    output is shown as `outputs` gives it (the prompt budget's text, `output_texts`), else on one line, clipped,
    fenced as data; `notes` says what stands for an output shown elsewhere (not data: not fenced)."""
    lines = []
    for step in plan.steps:
        action = f"tool {step.tool} {json.dumps(step.args)}" if step.tool else f"agent {step.agent or 'llm'}"
        status, output = result_of(step, results)
        line = f"- {step.step_id}: {_clip(step.description)} | {action} | {status}"
        if status == StepStatus.COMPLETE and output is not None:
            if notes is not None and step.step_id in notes:
                line += f" | output: {notes[step.step_id]}"
            else:
                shown = outputs[step.step_id] if outputs is not None and step.step_id in outputs else _clip(output)
                line += f" | output:\n{fence(shown, f'step {step.step_id}')}"
        elif step.errors:
            error = _clip("; ".join(step.errors))
            label = step.output_label  # a failed call's error text is its tool's data: fenced when untrusted
            line += f" | error: {error if label.trusted else fence(error, ', '.join(label.sources) or 'a tool')}"
        if step.dependencies:
            line += f" | after: {', '.join(step.dependencies)}"
        lines.append(line)
    return "\n".join(lines) or "(no steps)"


def output_texts(plan: Plan, results: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Each complete step's output on one line, whole, newest step first (the order the prompt budget favours)."""
    out = {}
    for step in reversed(plan.steps):
        status, output = result_of(step, results)
        if status == StepStatus.COMPLETE and output is not None:
            out[step.step_id] = one_line(output)
    return out


# -- deterministic facts ----------------------------------------------------------------------------------------
def _reachable(plan: Plan) -> dict[str, set[str]]:
    """For every step, the steps it depends on directly or transitively (known steps only)."""
    ids = {s.step_id for s in plan.steps}
    deps = {s.step_id: [d for d in s.dependencies if d in ids] for s in plan.steps}
    out: dict[str, set[str]] = {}
    for sid in deps:
        seen: set[str] = set()
        todo = list(deps[sid])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(deps[node])
        out[sid] = seen
    return out


def deterministic_issues(plan: Plan, tools: Mapping[str, ToolSpec]) -> list[ValidationIssue]:
    """Facts found without the LLM: unregistered tools and broken dependencies. Ids D1, D2… in plan order."""
    position = {s.step_id: i for i, s in reversed(list(enumerate(plan.steps)))}
    reach = _reachable(plan)
    issues: list[ValidationIssue] = []
    reported_cycles: set[str] = set()

    def add(kind: IssueType, severity: Severity, sid: str, ref: str, text: str, repair: dict[str, Any]) -> None:
        issues.append(
            ValidationIssue(
                issue_id=f"D{len(issues) + 1}",
                type=kind,
                severity=severity,
                description=text,
                location={"step_id": sid, "artifact_reference": ref},
                proposed_repair=repair,
                source="deterministic",
            )
        )

    for i, step in enumerate(plan.steps):
        sid, ref = step.step_id, f"plan.steps[{i}]"
        if step.tool is not None and step.tool not in tools:
            candidates = difflib.get_close_matches(step.tool, list(tools), n=3) or sorted(tools)
            text = f"step {sid} names tool {step.tool!r}, which is not registered"
            changes = {"tool": step.tool, "candidates": candidates}
            add(IssueType.HALLUCINATION, Severity.HIGH, sid, f"{ref}.tool", text, _repair("replace_tool", sid, changes))
        if sid in reach.get(sid, ()) and sid not in reported_cycles:
            members = _cycle_through(plan, sid, reach)
            reported_cycles.update(members)
            cycle = f"dependency cycle between steps {', '.join(members)}"
            text = f"step {sid} depends on itself" if members == [sid] else cycle
            repair = _repair("logical_correction", sid, {"break_cycle": members})
            add(IssueType.CONSISTENCY, Severity.HIGH, sid, f"{ref}.dependencies", text, repair)
        for dep in step.dependencies:
            if dep not in position:
                text = f"step {sid} depends on {dep!r}, which is not in the plan"
                repair = _repair("logical_correction", sid, {"remove_dependency": dep})
                add(IssueType.CONSISTENCY, Severity.HIGH, sid, f"{ref}.dependencies", text, repair)
            elif position[dep] > i and sid not in reach[dep]:  # an edge inside a cycle is reported as the cycle
                text = f"step {sid} depends on {dep}, which runs later"
                repair = _repair("reorder_steps", sid, {"move_after": dep})
                add(IssueType.CONSISTENCY, Severity.MEDIUM, sid, f"{ref}.dependencies", text, repair)
    for sid, text in reference_problems(plan, tools):  # $from a missing or later step, or an impossible path
        repair = _repair("logical_correction", sid, {})
        add(IssueType.CONSISTENCY, Severity.HIGH, sid, "args", f"step {sid} {text}", repair)
    return issues


def _cycle_through(plan: Plan, sid: str, reach: Mapping[str, set[str]]) -> list[str]:
    """The steps on a dependency cycle through `sid`, in plan order."""
    return [s.step_id for s in plan.steps if s.step_id == sid or (s.step_id in reach[sid] and sid in reach[s.step_id])]


def _repair(action: str, target: str, changes: dict[str, Any]) -> dict[str, Any]:
    return {"action": action, "target": target, "changes": changes}


# -- the LLM's answer -------------------------------------------------------------------------------------------
def validation_problems(obj: Any) -> list[str]:
    """Why an answer is not a usable issue list; empty when it is. Unknown step ids are not problems."""
    if not isinstance(obj, dict):
        return ["answer must be a JSON object with an 'issues' list"]
    if "issues" not in obj:
        return [missing_field("(root): 'issues' is a required property")]
    items = obj["issues"]
    if not isinstance(items, list):
        return ["issues: must be a list"]
    errors: list[str] = []
    for i, item in enumerate(items[:MAX_LLM_ISSUES]):
        at = f"issues/{i}"
        if not isinstance(item, dict):
            errors.append(f"{at}: must be an object")
            continue
        for name, enum_ in (("type", IssueType), ("severity", Severity)):
            value = item.get(name)
            if value is None:
                errors.append(missing_field(f"{at}: '{name}' is a required property"))
            elif _member(enum_, value) is None:
                errors.append(f"{at}/{name}: {value!r} is not one of {[m.value for m in enum_]}")
        description = item.get("description")
        if not isinstance(description, str) or not description.strip():
            errors.append(f"{at}/description: must be a non-empty string")
        for name in ("step_id", "repair"):
            if item.get(name) is not None and not isinstance(item[name], str):
                errors.append(f"{at}/{name}: must be a string")
    return errors


def _member(enum_: type[IssueType] | type[Severity], value: Any) -> Any:
    if not isinstance(value, str):
        return None
    text = value.strip()
    for member in enum_:
        if member.value.lower() == text.lower():
            return member
    return None


def llm_issues(
    items: list[dict[str, Any]], plan: Plan, facts: list[ValidationIssue], artifact_type: ArtifactType
) -> list[ValidationIssue]:
    """The model's issues worth keeping (at most four), numbered V1, V2…: not pinned to a step the plan lacks, not a
    repeat, not a hallucination the facts already name."""
    ids = {s.step_id for s in plan.steps}
    known = {(f.type, (f.location or {}).get("step_id")) for f in facts if f.type is IssueType.HALLUCINATION}
    out: list[ValidationIssue] = []
    seen: set[tuple[IssueType, str | None, str]] = set()
    for item in items[:MAX_LLM_ISSUES]:
        kind, severity = _member(IssueType, item["type"]), _member(Severity, item["severity"])
        description = " ".join(item["description"].split())
        raw_sid = (item.get("step_id") or "").strip()
        if raw_sid and raw_sid not in ids:
            continue  # pinned to a step the plan does not have: a copied example, not a finding about this plan
        sid = raw_sid or None
        key = (kind, sid, description.lower())
        if (kind, sid) in known or key in seen:
            continue
        seen.add(key)
        suggestion = (item.get("repair") or "").strip()
        out.append(
            ValidationIssue(
                issue_id=f"V{len(out) + 1}",
                type=kind,
                severity=severity,
                description=description,
                location={"step_id": sid, "artifact_reference": artifact_type.value} if sid else None,
                proposed_repair={
                    "action": _ACTIONS[kind],
                    "target": sid or "plan",
                    "changes": {"suggestion": suggestion},
                }
                if suggestion
                else None,
                source="llm",
            )
        )
    return out
