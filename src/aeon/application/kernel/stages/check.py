"""Phase B: validate the plan before it runs: steps exist, fragments are whole, tool problems are flagged."""

from __future__ import annotations

import msgspec

from aeon.application.kernel.run import StageRun
from aeon.application.kernel.wiring import Checking
from aeon.application.plans.validation import Problem, annotate
from aeon.domain.context import ValidatePlanInput
from aeon.domain.phases import Component, Stage, Transition
from aeon.domain.plan import Plan
from aeon.domain.run_state import RunState
from aeon.domain.transitions import CONTRACTS


class PlanChecked(msgspec.Struct, kw_only=True):
    """Phase B's result; its fields named as the A->B and B->C contracts name them."""

    refined_plan: Plan
    problems: list[Problem]
    next_pass_state: RunState

    @property
    def next(self) -> Stage:
        return Stage.EXECUTE


async def validate_plan(run: StageRun, services: Checking) -> PlanChecked:
    plan, runner, contract = run.plan, services.runner, CONTRACTS[Transition.B_TO_C]
    run.enter(ValidatePlanInput(task_profile=run.profile, initial_plan=plan))

    def failed(code: str, detail: str) -> Exception:
        return runner.error(Transition.B_TO_C, contract.failure(code), detail, Component.VALIDATOR)

    if not plan.steps:
        raise failed("MISSING_STEPS", "the plan has no steps")

    async def check_fragments() -> None:
        steps = plan.steps
        if bad := [st.step_id or f"#{st.step_index}" for st in steps if not (st.step_id and st.description)]:
            raise failed("INVALID_FRAGMENT_FIELDS", f"steps without id or description: {', '.join(bad)}")
        ids = [step.step_id for step in steps]
        if dup := sorted({i for i in ids if ids.count(i) > 1}):
            raise failed("INVALID_FRAGMENT_STRUCTURE", f"duplicate step ids: {', '.join(dup)}")

    await runner.step(Transition.B_TO_C, Component.VALIDATOR, check_fragments)
    problems = annotate(plan, services.resolver)
    for problem in problems:
        run.record.warn(str(problem))
    return PlanChecked(refined_plan=plan, problems=problems, next_pass_state=run.state)
