"""Phase C2 in one LLM call: the semantic-validation issues and the convergence judgement asked together.

The deterministic facts (unregistered tools, broken dependencies, failed or unverified steps, answer claims the tool
log does not back) are found first and shown to the model as known problems; the answer then becomes the advisory
SemanticValidationReport (semantic_validation.py's rules) and the ConvergenceAssessment (convergence.py's rules:
facts only make the verdict stricter).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from aeon.application.judges.convergence import CONVERGENCE_SCHEMA, converge, convergence_problems
from aeon.application.judges.grounding import grounding_issues
from aeon.application.llm.prompt_budget import Part, PromptBudget
from aeon.application.llm.prompts import PromptTemplate
from aeon.application.llm.prompts.templates import in_thread
from aeon.application.llm.supervisor import Supervisor
from aeon.application.plans.semantic_validation import (
    VALIDATION_SCHEMA,
    deterministic_issues,
    llm_issues,
    output_texts,
    render_plan,
    validation_problems,
)
from aeon.domain.answers import final_answer
from aeon.domain.evaluation import ArtifactType, ConvergenceAssessment, ConvergenceCriteria, SemanticValidationReport
from aeon.domain.history import StepResult
from aeon.domain.plan import Plan
from aeon.domain.provenance import fence
from aeon.domain.records import ToolCall
from aeon.domain.tools import ToolSpec

ANSWER = "final answer"  # the answer's part name in a prompt_clipped record
_JUDGEMENT = {k: v for k, v in CONVERGENCE_SCHEMA["properties"].items() if k != "issues"}
# the judgement first, the issues last: a small model that has judged a task finished then lists no issues, where
# one that starts with the issue list tends to copy the example's
EVALUATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {**_JUDGEMENT, "issues": VALIDATION_SCHEMA["properties"]["issues"]},
    "required": [*_JUDGEMENT, "issues"],
}


def evaluation_problems(obj: Any) -> list[str]:
    """Why an answer is not a usable evaluation: its issue list, then its judgement; empty when usable."""
    problems = validation_problems(obj)
    if isinstance(obj, dict):
        problems += convergence_problems({**obj, "issues": []})
    return problems


class Evaluator:
    """One evaluation call per pass. Raises UnrecoverableOutput when the answer cannot be repaired, and whatever the
    gateway raises (LLMError, BudgetExhausted)."""

    def __init__(
        self,
        supervisor: Supervisor,
        criteria: ConvergenceCriteria,
        tools: Sequence[ToolSpec],
        *,
        new_id: Callable[[], str],
        budget: PromptBudget,
    ) -> None:
        self._supervisor = supervisor
        self._budget = budget
        self._criteria = criteria
        self._tools = {t.name: t for t in tools}
        self._tool_names: Collection[str] = frozenset(self._tools)
        self._new_id = new_id

    async def evaluate(
        self,
        *,
        request: str,
        profile_text: str,
        plan: Plan,
        results: Mapping[str, StepResult],
        tool_calls: Sequence[ToolCall],
        conversation: str | None = None,
    ) -> tuple[SemanticValidationReport, ConvergenceAssessment]:
        """The pass judged; `conversation`: a thread's conversation so far, shown before the request (a follow-up
        such as "and now divide that by 3" is judged against what "that" was)."""
        answer = final_answer(plan, results)
        grounding = grounding_issues(answer or "", tool_calls, self._tool_names)
        facts = deterministic_issues(plan, self._tools)
        known = [f"- {g}" for g in grounding] + [f"- {f.severity.value} {f.type.value}: {f.description}" for f in facts]
        evaluate = self._supervisor.prompts.evaluate
        template = in_thread(evaluate) if conversation else evaluate
        asked = {"request": request, "conversation": conversation} if conversation else {"request": request}
        values = self._values(template, asked, profile_text, plan, results, answer, "\n".join(known) or "(none)")
        judged = await self._supervisor.ask_json(
            "evaluate",
            template,
            values,
            schema=EVALUATION_SCHEMA,
            target="evaluation",
            validate=evaluation_problems,
        )
        kind = ArtifactType.CROSS_PHASE
        issues = facts + llm_issues(judged["issues"], plan, facts, kind)
        report = SemanticValidationReport.build(self._new_id(), kind, issues)
        # the model's own issues that do not block convergence stay in the assessment's detected issues
        limit = self._criteria.max_severity.rank
        mine = [i.description for i in issues if i.source == "llm" and i.severity.rank <= limit]
        assessment = converge(self._criteria, plan, report, grounding, {**judged, "issues": mine})
        return report, assessment

    def _values(
        self,
        template: PromptTemplate,
        asked: dict[str, str],
        profile_text: str,
        plan: Plan,
        results: Mapping[str, StepResult],
        answer: str | None,
        known: str,
    ) -> dict[str, str]:
        """The prompt's slots, the final answer and every step output whole within the prompt budget (the answer
        first, then the outputs newest first); a long output that is the final answer is shown once, as the answer."""
        outputs = output_texts(plan, results)
        answer_text = "" if answer is None else answer.strip()
        last = next(iter(outputs), None)  # the newest complete step: the final answer is its output
        once = self._supervisor.prompts.shown_once
        long_answer = bool(answer_text) and last is not None and len(outputs[last]) > once
        shown_once = {last: "(the final answer, below)"} if long_answer and last is not None else {}
        parts = [Part(ANSWER, answer_text)] if answer_text else []
        parts += [Part(s, t) for s, t in outputs.items() if s not in shown_once]

        def slots(texts: Mapping[str, str]) -> dict[str, str]:
            said = fence(texts[ANSWER], "the final answer") if ANSWER in texts else "(empty)"  # measured fenced
            shown = "(no step completed)" if answer is None else said
            return {
                **asked,
                "profile": profile_text or "(none)",
                "plan": render_plan(plan, results, texts, notes=shown_once),
                "answer": shown,
                "issues": known,
            }

        return slots(self._budget.fit("evaluate", parts, lambda texts: template.fill(slots(texts))))
