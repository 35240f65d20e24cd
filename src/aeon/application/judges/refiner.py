"""Plan refinement (phase C3): the model proposes deltas; only registered tools and well-formed steps get through."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from aeon.application.llm.prompt_budget import Part, PromptBudget
from aeon.application.llm.prompts import templates
from aeon.application.llm.supervisor import Supervisor
from aeon.application.plans.validation import step_schema, tool_problems
from aeon.application.schemas import one_line
from aeon.domain.evaluation import ValidationIssue
from aeon.domain.plan import Plan, PlanStep
from aeon.domain.provenance import fence
from aeon.domain.refinement import RefinementAction, RefinementActionType, Subplan
from aeon.domain.tools import ToolSpec

_PROPOSABLE = ("ADD", "MODIFY", "REPLACE", "REMOVE", "SUBPLAN_CREATE")
_NEEDS_TARGET = {"MODIFY", "REPLACE", "REMOVE", "SUBPLAN_CREATE"}
_NEEDS_STEP = {"ADD", "MODIFY", "REPLACE"}


def plan_lines(plan: Plan, outputs: Mapping[str, str] | None = None) -> str:
    """The plan as the model sees it: one line per step with status, call and output (as `outputs` gives it: the
    prompt budget's text; else on one line, clipped)."""
    lines = []
    for s in plan.steps:
        call = f"{s.tool} {json.dumps(s.args)}" if s.tool else "agent llm"
        shown = outputs[s.step_id] if outputs is not None and s.step_id in outputs else one_line(s.step_output, 160)
        out = f" ->\n{fence(shown, f'step {s.step_id}')}" if s.step_output is not None else ""
        lines.append(f"{s.step_id} [{s.status.value}] {s.description} | {call}{out}")
    return "\n".join(lines)


MAX_ACTIONS = 2  # surgical: a small model otherwise repeats whole actions to the token limit
MAX_SUBSTEPS = 3


def refinement_schema(tool_names: Sequence[str]) -> dict[str, Any]:
    """The JSON schema a refinement answer must satisfy; sent to providers that constrain output."""
    step = step_schema({"type": "string", "enum": sorted(tool_names)} if tool_names else None)
    return {
        "type": "object",
        "properties": {
            "actions": {
                "type": "array",
                "maxItems": MAX_ACTIONS,
                "items": {
                    "type": "object",
                    "properties": {
                        "action_type": {"type": "string", "enum": list(_PROPOSABLE)},
                        "target_step_id": {"type": "string"},
                        "new_step": step,
                        "substeps": {"type": "array", "maxItems": MAX_SUBSTEPS, "items": step},
                        "justification": {"type": "string", "minLength": 1},
                    },
                    # all required: a constrained small model leaves optional fields out entirely
                    "required": ["action_type", "target_step_id", "new_step", "substeps", "justification"],
                },
            }
        },
        "required": ["actions"],
    }


class Refiner:
    def __init__(self, supervisor: Supervisor, tools: Sequence[ToolSpec], budget: PromptBudget) -> None:
        self._supervisor = supervisor
        self._budget = budget
        self._tools = {t.name: t for t in tools}
        self.schema = refinement_schema(list(self._tools))

    def problems(self, obj: Any) -> list[str]:
        """Why an answer is not a usable list of actions; steps must name registered tools."""
        if not isinstance(obj, dict) or not isinstance(obj.get("actions"), list):
            return ["'actions' is a required property"]
        # Counts the provider may not enforce (Anthropic takes no maxItems): checked here, whoever answered.
        out = _too_many("actions", obj["actions"], MAX_ACTIONS)
        for i, a in enumerate(obj["actions"], start=1):
            if not isinstance(a, dict) or a.get("action_type") not in _PROPOSABLE:
                out.append(f"action {i}: action_type must be one of {', '.join(_PROPOSABLE)}")
                continue
            if not str(a.get("justification") or "").strip():
                out.append(f"action {i}: 'justification' is a required property")
            if a["action_type"] in _NEEDS_TARGET and not a.get("target_step_id"):
                out.append(f"action {i}: 'target_step_id' is a required property")
            if a["action_type"] in _NEEDS_STEP:
                out.extend(f"action {i}: {p}" for p in self._step_problems(a.get("new_step")))
            if a["action_type"] == "SUBPLAN_CREATE":
                subs = a.get("substeps")
                if not isinstance(subs, list) or not subs:
                    out.append(f"action {i}: 'substeps' must list the steps that replace the target")
                elif len(subs) > MAX_SUBSTEPS:
                    out += _too_many(f"action {i}: substeps", subs, MAX_SUBSTEPS)
                else:
                    out.extend(
                        f"action {i} substep {j}: {p}"
                        for j, sub in enumerate(subs, 1)
                        for p in self._step_problems(sub)
                    )
        return out

    def _step_problems(self, raw: Any) -> list[str]:
        if not isinstance(raw, dict) or not raw.get("step_id") or not raw.get("description"):
            return ["'new_step' with step_id and description is a required property"]
        return tool_problems(_step(raw), self._tools)

    async def propose(
        self,
        *,
        request: str,
        profile_text: str,
        plan: Plan,
        problems: Sequence[str],
        issues: Sequence[ValidationIssue],
        conversation: str | None = None,
    ) -> list[RefinementAction]:
        """The refinement actions asked for; `conversation`: a thread's conversation so far, before the request."""
        # every step output whole within the prompt budget, newest first when it must clip
        refine = self._supervisor.prompts.refine
        template = templates.in_thread(refine) if conversation else refine
        asked = {"request": request, "conversation": conversation} if conversation else {"request": request}
        parts = [Part(s.step_id, one_line(s.step_output)) for s in reversed(plan.steps) if s.step_output is not None]

        def slots(texts: Mapping[str, str]) -> dict[str, str]:
            return {
                **asked,
                "profile": profile_text,
                "plan": plan_lines(plan, texts),
                "problems": "; ".join(problems) or "the evaluation did not converge",
            }

        values = slots(self._budget.fit("refine", parts, lambda texts: template.fill(slots(texts))))
        obj = await self._supervisor.ask_json(
            "refine", template, values, schema=self.schema, target="refinement", validate=self.problems
        )
        actions = [self._action(a, issues) for a in obj["actions"]]
        for action in actions:  # the steps this prompt wrote: labelled with the untrusted tool descriptions it held
            self._supervisor.described.mark([*([action.new_step] if action.new_step else []), *_substeps(action)])
        return actions

    def _action(self, a: Mapping[str, Any], issues: Sequence[ValidationIssue]) -> RefinementAction:
        kind = a["action_type"]
        subplan = None
        if kind == "SUBPLAN_CREATE":
            goal = str((a.get("new_step") or {}).get("description") or a["justification"])
            subplan = Subplan(
                parent_step_id=str(a["target_step_id"]),
                subplan_goal=goal,
                substeps=[_step(x) for x in a["substeps"]],
                depth_level=1,
                created_by="recursive_planner",
            )
        return RefinementAction(
            action_type=RefinementActionType(kind),
            justification=str(a["justification"]),
            target_step_id=a.get("target_step_id") or None,
            new_step=_step(a["new_step"]) if kind in _NEEDS_STEP else None,
            semantic_validation_input=list(issues),
            subplan=subplan,
        )


def _step(raw: Mapping[str, Any]) -> PlanStep:
    """A proposed step; one that names no tool is a reasoning step (`agent: llm`), the only other kind the guide
    offers. Measured on Gemma 3 270M (the recorded refinement run): the model leaves the agent out of the step it
    adds, which then failed as "names no tool and is not an 'agent: llm' step" in every repair of every pass."""
    return msgspec.convert(
        {
            "step_id": str(raw["step_id"]),
            "description": str(raw["description"]),
            "tool": raw.get("tool") or None,
            "agent": raw.get("agent") or (None if raw.get("tool") else "llm"),
            "args": dict(raw.get("args") or {}),
            "dependencies": [str(d) for d in raw.get("dependencies") or []],
            "provides": [str(d) for d in raw.get("provides") or []],
        },
        PlanStep,
    )


def _substeps(action: RefinementAction) -> list[PlanStep]:
    return action.subplan.substeps if action.subplan is not None else []


def _too_many(what: str, items: Sequence[Any], limit: int) -> list[str]:
    return [f"{what}: has {len(items)} items, more than the {limit} allowed"] if len(items) > limit else []
