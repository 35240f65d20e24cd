"""Phase C3: the model proposes plan deltas for what the evaluation found; the refinement gate lets through the
ones that keep the plan sound. A refiner answer that cannot be used keeps the plan as it is."""

from __future__ import annotations

from collections.abc import Mapping

from aeon.application.errors import LLMTruncated, UnrecoverableOutput
from aeon.application.judges.refinement_gate import RefinementGate
from aeon.application.judges.refiner import Refiner
from aeon.application.kernel.phase_runner import PhaseRunner
from aeon.application.kernel.run import StageRun
from aeon.application.llm.profiler import describe
from aeon.domain.advisories import RefinementFailed
from aeon.domain.context import RefineInput
from aeon.domain.history import Evaluation, StepResult
from aeon.domain.phases import Component, Transition
from aeon.domain.refinement import ActionOutcome, RefinementAction


async def refine_plan(
    run: StageRun,
    runner: PhaseRunner,
    refiner: Refiner,
    gate: RefinementGate,
    results: Mapping[str, StepResult],
    evaluation: Evaluation,
) -> list[ActionOutcome]:
    state, plan = run.state, run.plan
    given = RefineInput(
        task_profile=run.profile, plan_state=plan, execution_results=results, evaluation_results=evaluation
    )
    run.enter(given)
    assessment, report = evaluation.convergence, evaluation.validation_report
    problems = [*assessment.reason_codes, *assessment.detected_issues]
    profile_text = describe(state.profile) if state.profile else "unknown"

    async def propose() -> list[RefinementAction] | None:
        try:
            return await refiner.propose(
                request=state.request, profile_text=profile_text, plan=plan, problems=problems, issues=report.issues
            )
        except (UnrecoverableOutput, LLMTruncated) as exc:  # keep the current plan and go on
            state.advise(RefinementFailed(pass_number=state.pass_number, detail=str(exc)))
            run.record.event("refinement_failed", detail=str(exc))
            return None

    actions = await runner.step(Transition.C_TO_D, Component.REFINER, propose, retry=False)
    if actions is None:
        return []
    accepted = gate.accept(plan, actions, report, pass_number=state.pass_number)
    run.record.refinement(accepted.outcomes, accepted.advisories)
    return accepted.outcomes
