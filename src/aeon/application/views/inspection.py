"""`aeon inspect`'s report: a saved ExecutionHistory analysed into passes, phases, refinements and cross-pass
patterns (the text of it: aeon.application.views.inspection_text)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from aeon.application.errors import InputError
from aeon.application.redaction import REDACTED, Redactor, secret_key
from aeon.application.views import labels

_NOT_HISTORY = "not an Aeon execution history (expected execution_id and passes; see `aeon run --history`)"


def redacted(doc: Any, redactor: Redactor) -> Any:
    """`doc` with its secrets redacted, pass by pass: only a part whose JSON form may hold one is walked and copied
    (walking every string of a 50 MB history takes tens of seconds)."""
    if not isinstance(doc, dict):
        return redactor.data(doc)
    return {
        redactor.text(k): REDACTED
        if secret_key(k)
        else [redactor.data(p) for p in v]
        if k == "passes" and isinstance(v, list)
        else redactor.data(v)
        for k, v in doc.items()
    }


def analyse(doc: Any) -> dict[str, Any]:
    """The inspection report of a history document; InputError when it is not one."""
    if not isinstance(doc, dict) or not isinstance(doc.get("passes"), list) or "execution_id" not in doc:
        raise InputError(_NOT_HISTORY)
    if not all(isinstance(doc.get(k, {}), dict) for k in ("final_result", "overall_statistics", "configuration")):
        raise InputError(f"{_NOT_HISTORY}: final_result, overall_statistics and configuration must be objects")
    try:
        return _analyse(doc)
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        raise InputError(f"{_NOT_HISTORY}: {type(exc).__name__}: {exc}") from None


def _approval(record: dict[str, Any]) -> dict[str, Any]:
    request, decision = record["request"], record["decision"]
    return {
        "pass": request.get("pass_number"),
        "step_id": request.get("step_id"),
        "tool": request.get("tool"),
        "asked": request.get("args"),
        "verdict": decision.get("verdict"),
        "by": decision.get("by"),
        "reason": decision.get("reason"),
        "edited": bool(record.get("edited")),
        "args": decision.get("args"),
    }


def _analyse(doc: dict[str, Any]) -> dict[str, Any]:
    passes = [_pass(p) for p in doc["passes"]]
    refined: Counter[str] = Counter()
    for p in passes:
        for sid in {r["target"] for r in p["refinements"] if r["target"]}:
            refined[sid] += 1
    blockers: Counter[str] = Counter()
    for p in passes:
        if p["converged"] is False:
            blockers.update(c for c in p["reason_codes"] if c not in ("complete", "coherent", "consistent"))
    manual = [r for p in passes for r in p["refinements"] if r.get("manual_intervention")]
    return {
        "execution_id": doc["execution_id"],
        "task_input": doc.get("task_input"),
        "configuration": doc.get("configuration", {}),
        "final_result": doc.get("final_result") or {},
        "overall_statistics": doc.get("overall_statistics") or {},
        "profiles": doc.get("profiles") or [],
        "passes": passes,
        "advisories": doc.get("advisories") or [],
        "ledger": doc.get("ledger"),
        "approvals": [_approval(a) for a in doc.get("approvals") or []],
        "patterns": {
            "fragments_refined_repeatedly": sorted(s for s, n in refined.items() if n > 1),
            "convergence_blockers": dict(blockers.most_common()),
            "manual_intervention": manual,
            "depth_adjustments": [
                {
                    "pass": p["pass_number"],
                    "decision": p["depth"].get("decision"),
                    "reason": p["depth"].get("adjustment_reason"),
                    "allocated_ttl": p["depth"].get("allocated_ttl"),
                }
                for p in passes
                if p["depth"]
            ],
        },
    }


def _pass(p: dict[str, Any]) -> dict[str, Any]:
    evaluation = p.get("evaluation_results") or {}
    conv = evaluation.get("convergence") or {}
    report = evaluation.get("validation_report") or {}
    scores = conv.get("scores") or {}
    refinements = []
    for change in p.get("refinement_changes") or []:
        action = change.get("action") or {}
        refinements.append(
            {
                "action": action.get("action_type"),
                "target": action.get("target_step_id") or (action.get("new_step") or {}).get("step_id"),
                "applied": change.get("applied"),
                "reason": change.get("reason") or action.get("justification"),
                "triggered_by": [
                    i.get("issue_id") or i.get("description") for i in action.get("semantic_validation_input") or []
                ],
                "manual_intervention": change.get("manual_intervention", False),
            }
        )
    plan = p.get("final_plan_state") or p.get("plan_state") or {}
    return {
        "pass_number": p.get("pass_number"),
        "ttl_remaining": p.get("ttl_remaining"),
        "timing": p.get("timing_information"),
        "phases": p.get("phases") or [],
        "plan": [_step(s) for s in plan.get("steps", [])],
        "converged": conv.get("converged") if conv else None,
        "scores": {
            "completeness": scores.get("completeness_score"),
            "coherence": scores.get("coherence_score"),
            "consistency": scores.get("consistency_status"),
        },
        "reason_codes": conv.get("reason_codes", []),
        "detected_issues": conv.get("detected_issues", []),
        "validation_issues": [
            {k: i.get(k) for k in ("issue_id", "type", "severity", "description", "location", "source")}
            for i in report.get("issues", [])
        ],
        "refinements": refinements,
        "depth": p.get("adaptive_depth") or {},
        "llm_usage": p.get("llm_usage") or {},
    }


def _step(s: dict[str, Any]) -> dict[str, Any]:
    """A step as the report lists it; `untrusted` says where it came from when written from untrusted data."""
    shown = {k: s.get(k) for k in ("step_id", "status", "tool", "agent", "description", "step_output")}
    if mark := labels.untrusted(s.get("origin")):
        shown["untrusted"] = mark
    return shown
