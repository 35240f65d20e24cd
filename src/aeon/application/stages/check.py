"""Phase B: validate the plan before it runs: steps exist, fragments are whole, tool problems are flagged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from aeon.application.run import Run
from aeon.application.validation import Problem, annotate
from aeon.application.wiring import RunServices
from aeon.domain.phases import CONTRACTS, Stage
from aeon.domain.plan import Plan
from aeon.domain.run_state import RunState


class PlanChecked(msgspec.Struct, kw_only=True):
    plan: Plan
    problems: list[Problem]
    state: RunState

    def contract_values(self) -> Mapping[str, Any]:
        return {"refined_plan": self.plan if self.plan.steps else None, "next_pass_state": self.state}


async def validate_plan(run: Run, k: RunServices) -> PlanChecked:
    plan, contract = run.plan, CONTRACTS["B->C"]
    run.enter(Stage.VALIDATE_PLAN, task_profile=run.state.profile, initial_plan=plan)
    if not plan.steps:
        raise k.runner.error("B->C", contract.failure("MISSING_STEPS"), "the plan has no steps", "validator")

    async def check_fragments() -> None:
        if bad := [s.step_id or f"#{s.step_index}" for s in plan.steps if not (s.step_id and s.description)]:
            detail = f"steps without id or description: {', '.join(bad)}"
            raise k.runner.error("B->C", contract.failure("INVALID_FRAGMENT_FIELDS"), detail, "validator")
        ids = [s.step_id for s in plan.steps]
        if dup := sorted({i for i in ids if ids.count(i) > 1}):
            detail = f"duplicate step ids: {', '.join(dup)}"
            raise k.runner.error("B->C", contract.failure("INVALID_FRAGMENT_STRUCTURE"), detail, "validator")

    await k.runner.step("B->C", "validator", check_fragments)
    problems = annotate(plan, k.resolver)
    for problem in problems:
        run.record.warn(str(problem))
    return PlanChecked(plan=plan, problems=problems, state=run.state)
