"""Phase C2: one evaluation call: the advisory semantic validation of plan and outputs, and the convergence
assessment built on it."""

from __future__ import annotations

from collections.abc import Mapping

from aeon.application.profiler import describe
from aeon.application.refinement_gate import follow_up_questions
from aeon.application.run import Run
from aeon.application.wiring import RunServices
from aeon.domain.history import Evaluation, StepResult
from aeon.domain.phases import Stage


async def evaluate_pass(run: Run, k: RunServices, results: Mapping[str, StepResult]) -> Evaluation:
    s, plan = run.state, run.plan
    run.enter(Stage.EVALUATE, task_profile=s.profile, plan_state=plan, execution_results=results)
    profile_text = describe(s.profile) if s.profile else "unknown"
    report, assessment = await k.runner.step(
        "C->D",
        "evaluator",
        lambda: k.evaluator.evaluate(
            request=s.request, profile_text=profile_text, plan=plan, results=results, tool_calls=s.tool_calls
        ),
    )
    s.report = report
    s.assessments.append(assessment)
    run.record.assessment(assessment)
    for question in follow_up_questions(plan, report, s.pass_number):  # every pass, the last one too
        run.record.advisory(question)
    return Evaluation(validation_report=report, convergence=assessment)
