"""The convergence engine: one LLM judgement, then deterministic facts decide whether the task is done."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from aeon.application.errors import missing_field
from aeon.application.grounding import grounding_issues
from aeon.application.prompts.evaluation import CONVERGE
from aeon.application.semantic_validation import final_answer, render_plan
from aeon.application.supervisor import Supervisor
from aeon.domain.evaluation import (
    ConvergenceAssessment,
    ConvergenceCriteria,
    SemanticValidationReport,
    ValidationIssue,
)
from aeon.domain.plan import ExecutionMode, Plan, PlanStep, StepStatus
from aeon.domain.records import ToolCall

MAX_LLM_ISSUES = 4
_SCORES = ("completeness_score", "coherence_score")

CONVERGENCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "completeness_score": {"type": "number", "minimum": 0, "maximum": 1},
        "coherence_score": {"type": "number", "minimum": 0, "maximum": 1},
        "consistent": {"type": "boolean"},
        "explanation": {"type": "string", "minLength": 1},
        "issues": {"type": "array", "maxItems": MAX_LLM_ISSUES, "items": {"type": "string"}},
    },
    "required": ["completeness_score", "coherence_score", "consistent", "explanation", "issues"],
}


def convergence_problems(obj: Any) -> list[str]:
    """Why an answer is not a usable judgement; empty when it is. A missing `issues` list counts as empty."""
    if not isinstance(obj, dict):
        return ["answer must be a JSON object"]
    errors: list[str] = []
    for name in _SCORES:
        value = obj.get(name)
        if name not in obj:
            errors.append(missing_field(f"(root): {name!r} is a required property"))
        elif isinstance(value, bool) or not isinstance(value, int | float):
            errors.append(f"{name}: {value!r} is not a number")
        elif not 0.0 <= value <= 1.0:
            errors.append(f"{name}: {value!r} is outside 0..1")
    if "consistent" not in obj:
        errors.append(missing_field("(root): 'consistent' is a required property"))
    elif not isinstance(obj["consistent"], bool):
        errors.append(f"consistent: {obj['consistent']!r} is not a boolean")
    explanation = obj.get("explanation")
    if not isinstance(explanation, str) or not explanation.strip():
        errors.append("explanation: must be a non-empty string")
    issues = obj.get("issues", [])
    if not isinstance(issues, list) or not all(isinstance(i, str) for i in issues):
        errors.append("issues: must be a list of strings")
    return errors


def _issue_lines(report: SemanticValidationReport, grounding: Sequence[str]) -> list[str]:
    lines = [f"- {g}" for g in grounding]
    for i in report.issues:
        where = (i.location or {}).get("step_id")
        lines.append(f"- {i.severity.value} {i.type.value}{f' at {where}' if where else ''}: {i.description}")
    return lines


class ConvergenceEngine:
    """Decides whether a pass converged: complete, coherent and consistent, with no blocking validation issue.

    The LLM scores completeness and coherence and says whether plan, outputs and answer agree; deterministic
    facts (failed or unfinished steps, validation issues above `criteria.max_severity`, answer claims the tool log
    does not back) can only make the verdict stricter, never looser. Raises UnrecoverableOutput when the answer
    cannot be repaired, and whatever the gateway raises (LLMError, BudgetExhausted).
    """

    def __init__(
        self,
        supervisor: Supervisor,
        criteria: ConvergenceCriteria,
        tool_names: Collection[str],
    ) -> None:
        self._supervisor = supervisor
        self._criteria = criteria
        self._tool_names = frozenset(tool_names)

    async def assess(
        self,
        *,
        request: str,
        profile_text: str,
        plan: Plan,
        report: SemanticValidationReport,
        tool_calls: Sequence[ToolCall],
    ) -> ConvergenceAssessment:
        answer = final_answer(plan)
        grounding = grounding_issues(answer or "", tool_calls, self._tool_names)
        issue_lines = _issue_lines(report, grounding)
        values = {
            "request": request,
            "profile": profile_text or "(none)",
            "plan": render_plan(plan),
            "answer": "(no step completed)" if answer is None else answer.strip() or "(empty)",
            "issues": "\n".join(issue_lines) or "(none)",
        }
        judged = await self._supervisor.ask_json(
            "converge", CONVERGE, values, schema=CONVERGENCE_SCHEMA, target="convergence", validate=convergence_problems
        )
        return self.combine(plan, report, grounding, judged)

    @property
    def criteria(self) -> ConvergenceCriteria:
        return self._criteria

    def combine(
        self, plan: Plan, report: SemanticValidationReport, grounding: list[str], judged: dict[str, Any]
    ) -> ConvergenceAssessment:
        c = self._criteria
        completeness, coherence = float(judged["completeness_score"]), float(judged["coherence_score"])
        failed = [s for s in plan.steps if s.status is StepStatus.FAILED]
        unfinished = [s for s in plan.steps if s.status not in (StepStatus.COMPLETE, StepStatus.FAILED)]
        # a tool step that fell back to LLM text did not do what the plan asked: its output is unverified
        unverified = [s for s in plan.steps if s.mode is ExecutionMode.FALLBACK and s.tool is not None]
        complete = completeness >= c.min_completeness and not failed and not unfinished and not unverified
        coherent = coherence >= c.min_coherence
        llm_consistent = bool(judged["consistent"])
        consistent = llm_consistent and not grounding
        blockers = [i for i in report.issues if i.severity.rank > c.max_severity.rank]

        codes = [
            "complete" if complete else "incomplete",
            "coherent" if coherent else "incoherent",
            "consistent" if consistent else "inconsistent",
        ]
        codes += [f"failed_step:{s.step_id}" for s in failed]
        codes += [f"unfinished_step:{s.step_id}" for s in unfinished]
        codes += [f"unverified_step:{s.step_id}" for s in unverified]
        if blockers:
            codes.append("validation_blocker")
        if grounding:
            codes.append("hallucination")
        converged = complete and coherent and (consistent or not c.require_consistency) and not blockers

        detected = _detected(grounding, failed, unfinished, unverified, blockers, judged.get("issues", []))
        return ConvergenceAssessment(
            converged=converged,
            reason_codes=codes,
            scores={
                "completeness_score": completeness,
                "coherence_score": coherence,
                "consistency_status": {
                    "consistent": consistent,
                    "llm_consistent": llm_consistent,
                    "grounded": not grounding,
                },
            },
            explanation=" ".join(str(judged["explanation"]).split()),
            detected_issues=detected,
        )


def _detected(
    grounding: Sequence[str],
    failed: Sequence[PlanStep],
    unfinished: Sequence[PlanStep],
    unverified: Sequence[PlanStep],
    blockers: Sequence[ValidationIssue],
    judged: Sequence[Any],
) -> list[str]:
    """Every issue that held convergence back, facts first, then the model's own (at most four), each once."""
    detected = list(grounding)
    detected += [f"step {s.step_id} failed: {'; '.join(s.errors) or 'no detail'}" for s in failed]
    detected += [f"step {s.step_id} is {s.status.value}" for s in unfinished]
    detected += [f"step {s.step_id}: tool {s.tool!r} never ran; its output is unverified LLM text" for s in unverified]
    detected += [f"{i.issue_id} {i.severity.value} {i.type.value}: {i.description}" for i in blockers]
    detected += [" ".join(str(i).split()) for i in judged[:MAX_LLM_ISSUES] if str(i).strip()]
    return list(dict.fromkeys(detected))
