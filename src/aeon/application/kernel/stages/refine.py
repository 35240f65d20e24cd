"""Phase C3: the model proposes plan deltas for what the evaluation found; the refinement gate lets through the
ones that keep the plan sound. A refiner answer that cannot be used keeps the plan as it is; a refinement that no
later pass could use (no pass left, or too few calls or seconds) is not asked for."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from aeon.application.errors import LLMTruncated, UnrecoverableOutput
from aeon.application.judges.adaptive_depth import passes_after
from aeon.application.judges.refinement_gate import RefinementGate
from aeon.application.judges.refiner import Refiner
from aeon.application.kernel.phase_runner import PhaseRunner
from aeon.application.kernel.run import ExecutingRun, RunSettings, StageRun
from aeon.application.llm.profiler import describe
from aeon.domain.advisories import RefinementFailed
from aeon.domain.budget import Cap, CapHit
from aeon.domain.context import RefineInput
from aeon.domain.history import Evaluation, StepResult
from aeon.domain.log_pass import RefinementFailedRecord
from aeon.domain.phases import Component, Transition
from aeon.domain.refinement import ActionOutcome, RefinementAction

# What a refinement needs to be of use: its own call, and the evaluation of the pass that runs the refined plan.
CALLS_TO_USE = 2


class Unusable(msgspec.Struct, frozen=True, kw_only=True):
    """Why a refinement asked now could not be used; `cap` the resource cap that ends the run now (None: the TTL,
    which ends it at the next pass boundary)."""

    reason: str
    cap: CapHit | None = None


def unusable(run: ExecutingRun, settings: RunSettings) -> Unusable | None:
    """Why a refinement asked now would be paid for and never used, or None: no pass can follow this one (TTL), or
    the calls or seconds left cannot pay for it and for the evaluation of the pass that would run it (the seconds
    at the mean LLM call of the run so far)."""
    state = run.state
    assert state.depth is not None and state.assessments
    budget, limits = state.budget, state.budget.limits
    after = passes_after(
        state.depth,
        assessment=state.assessments[-1],
        report=state.report,
        history=state.assessments,
        passes_done=state.pass_number,
        cap=settings.ttl,
        ttl_remaining=budget.ttl_remaining,
    )
    if after == 0:
        allocated = f"{state.depth.allocated_ttl} allocated of cap {settings.ttl}"
        return Unusable(reason=f"no pass can follow pass {state.pass_number} to run a refined plan (TTL: {allocated})")
    left = limits.max_llm_calls - budget.llm_calls
    if left < CALLS_TO_USE:
        cap = CapHit(cap=Cap.MAX_LLM_CALLS, text=f"max_llm_calls ({limits.max_llm_calls})")
        need = f"a refinement and the next pass's evaluation need {CALLS_TO_USE}"
        return Unusable(reason=f"{left} LLM call{'' if left == 1 else 's'} left; {need}", cap=cap)
    remaining, calls = run.remaining_seconds(), state.usage.calls
    if remaining is not None and calls:
        mean = sum(c.seconds for c in calls) / len(calls)
        if remaining < CALLS_TO_USE * mean:
            cap = CapHit(cap=Cap.MAX_SECONDS, text=f"max_seconds ({limits.max_seconds:g})")
            need = f"a refinement and the next pass's evaluation take about {CALLS_TO_USE * mean:.1f} s"
            return Unusable(reason=f"{remaining:.1f} s left; {need} (mean LLM call so far {mean:.1f} s)", cap=cap)
    return None


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
                request=state.request, profile_text=profile_text, plan=plan, problems=problems, issues=report.issues,
                conversation=state.conversation or None,
            )  # fmt: skip
        except (UnrecoverableOutput, LLMTruncated) as exc:  # keep the current plan and go on
            state.advise(RefinementFailed(pass_number=state.pass_number, detail=str(exc)))
            run.record.log(RefinementFailedRecord(detail=str(exc)))
            return None

    actions = await runner.step(Transition.C_TO_D, Component.REFINER, propose, retry=False)
    if actions is None:
        return []
    if not state.seen.trusted:  # its prompt held untrusted outputs: every step it writes is untrusted, args too
        for action in actions:
            subs = action.subplan.substeps if action.subplan else []
            for step in [*([action.new_step] if action.new_step else []), *subs]:
                step.origin = step.origin.join(state.seen)
    accepted = gate.accept(plan, actions, report, pass_number=state.pass_number)
    run.record.refinement(accepted.outcomes, accepted.advisories)
    return accepted.outcomes
