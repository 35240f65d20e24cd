"""The convergence rules: the model's judgement of a pass, made stricter (never looser) by deterministic facts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aeon.application.errors import missing_field
from aeon.domain.evaluation import (
    ConvergenceAssessment,
    ConvergenceCriteria,
    SemanticValidationReport,
    ValidationIssue,
)
from aeon.domain.plan import Plan, PlanStep, StepStatus

MAX_LLM_ISSUES = 4
_SCORES = ("completeness_score", "coherence_score")

CONVERGENCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "completeness_score": {"type": "number", "minimum": 0, "maximum": 1},
        "coherence_score": {"type": "number", "minimum": 0, "maximum": 1},
        "consistent": {"type": "boolean"},
        # a few words for the record: no later step reads it, and a grammar-constrained server generates every character
        "explanation": {"type": "string", "minLength": 1, "maxLength": 100},
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


def converge(
    criteria: ConvergenceCriteria,
    plan: Plan,
    report: SemanticValidationReport,
    grounding: list[str],
    judged: dict[str, Any],
) -> ConvergenceAssessment:
    """Whether a pass converged: complete, coherent and consistent, with no blocking validation issue. The model's
    scores and verdict (`judged`) decide unless a fact (a failed, unfinished or fallback tool step, an issue above
    `criteria.max_severity`, an answer claim the tool log does not back) makes the verdict stricter, never looser."""
    completeness, coherence = float(judged["completeness_score"]), float(judged["coherence_score"])
    failed = [s for s in plan.steps if s.status is StepStatus.FAILED]
    unfinished = [s for s in plan.steps if s.status not in (StepStatus.COMPLETE, StepStatus.FAILED)]
    unverified = [s for s in plan.steps if s.tool_never_ran]  # LLM text where the plan asked for the tool
    complete = completeness >= criteria.min_completeness and not failed and not unfinished and not unverified
    coherent = coherence >= criteria.min_coherence
    llm_consistent = bool(judged["consistent"])
    consistent = llm_consistent and not grounding
    blockers = [i for i in report.issues if i.severity.rank > criteria.max_severity.rank]
    step_facts = (("failed", failed), ("unfinished", unfinished), ("unverified", unverified))

    codes = [
        "complete" if complete else "incomplete",
        "coherent" if coherent else "incoherent",
        "consistent" if consistent else "inconsistent",
        *(f"{kind}_step:{s.step_id}" for kind, steps in step_facts for s in steps),
    ]
    if blockers:
        codes.append("validation_blocker")
    if grounding:
        codes.append("hallucination")
    converged = complete and coherent and (consistent or not criteria.require_consistency) and not blockers

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
