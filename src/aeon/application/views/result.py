"""A run's result as a person reads it: the steps with their outputs, the status line, the convergence verdict; and
the --json document of it. Lines of text with the style they are shown in; writing them is the door's."""

from __future__ import annotations

from typing import Any

import msgspec

from aeon.application.results import RunResult, RunStatus
from aeon.application.schemas import one_line
from aeon.domain.evaluation import ConvergenceAssessment

MARKS = {"complete": "✓", "failed": "✗", "invalid": "⊘", "pending": "·", "running": "▶"}
Line = tuple[str, str | None]  # a line's text and its style (None: the style its first character calls for)

_CAPS = {
    "ttl": "the pass budget (TTL) ran out",
    "max_llm_calls": "the LLM-call cap was reached",
    "max_tokens": "the token cap was reached",
    "max_seconds": "the time cap ran out",
    "max_cost": "the cost cap would have been crossed",
}


def short(value: Any, limit: int = 160) -> str:
    return one_line(value, limit)


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """'1 step', '2 steps'; irregular plurals are given ('pass', 'passes')."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def _num(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "-"


def verdict(assessment: ConvergenceAssessment | None) -> str:
    """A convergence assessment in words: the verdict, each criterion with what decided it, the model's scores."""
    codes = assessment.reason_codes if assessment is not None else []
    why = {"failed_step": "failed", "unfinished_step": "did not run", "unverified_step": "is unverified fallback text"}
    causes = [f"step {c.split(':', 1)[1]} {why[c.split(':', 1)[0]]}" for c in codes if c.split(":", 1)[0] in why]
    words = []
    for code in codes:
        if code == "incomplete" and causes:
            words.append(f"incomplete ({'; '.join(causes)})")
        elif code == "hallucination":
            words.append("a tool claim the tool log does not back")
        elif code == "validation_blocker":
            words.append("a blocking validation issue")
        elif ":" not in code:
            words.append(code)
    sc = assessment.scores if assessment is not None else {}
    scores = f"model's scores: completeness {_num(sc.get('completeness_score'))}, coherence "
    scores += _num(sc.get("coherence_score"))
    head = "converged" if assessment is not None and assessment.converged else "not converged"
    return f"{head}: {', '.join(words) or '-'} · {scores}"


def status_line(result: RunResult) -> str:
    """What happened to the run, in words: completed, stopped by which cap, failed, interrupted."""
    c, b = result.counts, result.budget
    if result.status is RunStatus.TTL_EXPIRED and result.ttl_expiration is not None:
        head = f"stopped early: {_CAPS.get(result.ttl_expiration.cap, result.ttl_expiration.cap)}"
    elif result.status is RunStatus.UNVERIFIED:
        missing = ", ".join(f"{m.step_id} ({m.tool})" for m in result.tool_calls_not_made)
        head = f"unverified: the tool never ran for {missing}; LLM text stands in its place"
    elif result.status is RunStatus.AWAITING_APPROVAL and (r := result.pending_approval) is not None:
        head = (
            f"awaiting approval: step {r.step_id} calls {r.tool} {short(r.args, 200)} — "
            f"aeon approve {result.correlation_id} [--args JSON] or aeon deny {result.correlation_id} --reason TEXT"
        )
    elif result.status is RunStatus.DENIED and result.error is not None:
        head = f"denied: {result.error.message}"
    else:
        head = result.status.value
    return (
        f"{head} · {counted(result.passes, 'pass', 'passes')} (cap {b.ttl}) · "
        f"{counted(b.llm_calls, 'LLM call')} (cap {b.max_llm_calls}), "
        f"{counted(c.deterministic_repairs, 'deterministic repair')}, {counted(c.llm_repairs, 'LLM repair')}, "
        f"{counted(c.fallbacks, 'fallback')} · run {result.correlation_id}"
    )


def result_document(result: RunResult) -> dict[str, Any]:
    """The --json document: the whole result as plain data, without the history (that goes to --history)."""
    doc: dict[str, Any] = msgspec.to_builtins(result)
    doc.pop("history", None)
    return doc


def result_lines(result: RunResult) -> list[Line]:
    """The result as `aeon run` prints it: the goal and each step, the status line, the verdict, the answer, why it
    expired. An error is not among them: the door reports it once, on stderr."""
    lines: list[Line] = []
    plan = msgspec.to_builtins(result.plan) if result.plan is not None else None
    if plan:
        lines.append((f"\nGoal: {plan['goal']}", "bold"))
        for s in plan["steps"]:
            mark = MARKS.get(s["status"], "?")
            lines.append((f"{mark} {s['step_id']} [{s['status']}, {s.get('mode') or '-'}] {s['description']}", None))
            if s["status"] == "complete":
                lines.append((f"    output: {short(s.get('step_output'), 400)}", "default"))
            lines += [(f"    note: {e}", "dim") for e in [*(s.get("errors") or []), *(s.get("notes") or [])]]
    ok = result.status is RunStatus.COMPLETED
    lines.append(("\n" + status_line(result), "bold green" if ok else "bold yellow"))
    if result.converged is not None and result.passes:
        lines.append((verdict(result.convergence), "green" if result.converged else "yellow"))
    if result.answer is not None:
        lines.append((f"answer: {short(result.answer, 400)}", "bold"))
    if result.status is RunStatus.TTL_EXPIRED and result.ttl_expiration is not None:
        t = result.ttl_expiration
        lines.append((f"expired ({t.expiration_type.value}, phase {t.phase}): {t.message}", "yellow"))
    return lines
