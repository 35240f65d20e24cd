"""Answers a scripted model gives in a multi-pass run, one helper per LLM call kind."""

from __future__ import annotations

import json
from typing import Any

from harness import SUM_STEP, plan_json


def profile(depth: int = 3, sufficiency: float = 0.6, breadth: str = "moderate", confidence: str = "medium") -> str:
    return json.dumps(
        {
            "reasoning_depth": depth,
            "information_sufficiency": sufficiency,
            "expected_tool_usage": "minimal",
            "output_breadth": breadth,
            "confidence_requirement": confidence,
            "raw_inference": f"depth {depth} task",
        }
    )


def first(profile_answer: str, plan_answer: str) -> str:
    """Phase A's one answer on a first pass: the task profile and the plan together (two JSON answers joined)."""
    return json.dumps({"profile": json.loads(profile_answer), "plan": json.loads(plan_answer)})


def no_issues() -> str:
    return json.dumps({"issues": []})


def issues(*items: dict[str, Any]) -> str:
    return json.dumps({"issues": list(items)})


def verdict(
    ok: bool,
    *,
    completeness: float | None = None,
    coherence: float | None = None,
    issues: list[dict[str, Any]] | None = None,
) -> str:
    """The one evaluation answer of a pass: the validation issues (none by default) and the convergence judgement."""
    c = completeness if completeness is not None else (1.0 if ok else 0.4)
    h = coherence if coherence is not None else (1.0 if ok else 0.9)
    return json.dumps(
        {
            "issues": issues or [],
            "completeness_score": c,
            "coherence_score": h,
            "consistent": True,
            "explanation": "done" if ok else "the answer is not stated",
        }
    )


def refine(*actions: dict[str, Any]) -> str:
    return json.dumps({"actions": list(actions)})


def add_step(step_id: str, description: str, **fields: Any) -> dict[str, Any]:
    return {
        "action_type": "ADD",
        "target_step_id": "",
        "new_step": {"step_id": step_id, "description": description, **fields},
        "justification": "the answer must be stated",
    }


SUM_PLAN = plan_json(SUM_STEP)


def two_pass_script() -> list[str]:
    """Pass 1: profile and plan in one answer (A), validation + failed convergence (C2), one ADD (C3); pass 2 runs it
    and converges."""
    return [
        first(profile(3), SUM_PLAN),
        verdict(False),
        refine(add_step("s2", "State the sum from s1", agent="llm")),
        "The sum is 15.",
        verdict(True),
    ]
