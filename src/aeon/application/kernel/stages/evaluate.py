"""Phase C2: one evaluation call: the advisory semantic validation of plan and outputs, and the convergence
assessment built on it."""

from __future__ import annotations

from collections.abc import Mapping

from aeon.application.judges.evaluator import Evaluator
from aeon.application.judges.refinement_gate import follow_up_questions
from aeon.application.kernel.phase_runner import PhaseRunner
from aeon.application.kernel.run import StageRun
from aeon.application.llm.profiler import describe
from aeon.domain.context import EvaluateInput
from aeon.domain.history import Evaluation, StepResult
from aeon.domain.phases import Component, Transition


async def evaluate_pass(
    run: StageRun, runner: PhaseRunner, evaluator: Evaluator, results: Mapping[str, StepResult]
) -> Evaluation:
    state, plan, evaluate = run.state, run.plan, evaluator.evaluate
    run.enter(EvaluateInput(task_profile=run.profile, plan_state=plan, execution_results=results))
    profile_text = describe(state.profile) if state.profile else "unknown"
    report, assessment = await runner.step(
        Transition.C_TO_D,
        Component.EVALUATOR,
        lambda: evaluate(
            request=state.request,
            profile_text=profile_text,
            plan=plan,
            results=results,
            tool_calls=state.tool_calls,
            conversation=state.conversation or None,
        ),
    )
    state.assessed(report, assessment)
    run.record.assessment(assessment)
    for question in follow_up_questions(plan, report, state.pass_number):  # every pass, the last one too
        run.record.advisory(question)
    return Evaluation(validation_report=report, convergence=assessment)
