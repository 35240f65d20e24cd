"""The planner: one LLM call that turns a request into a Plan, supervised into shape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aeon.application.llm.lax_plan import coerce_plan
from aeon.application.llm.prompts import templates
from aeon.application.llm.supervisor import Supervisor
from aeon.application.plans.validation import build_plan, plan_schema, structural_problems
from aeon.domain.plan import Plan
from aeon.domain.tools import ToolSpec


class Planner:
    """Asks the model for a plan listing every registered tool, and lets the supervisor repair its answer."""

    def __init__(self, supervisor: Supervisor, tools: Sequence[ToolSpec], *, max_steps: int) -> None:
        self._supervisor = supervisor
        self._schema = plan_schema([t.name for t in tools], max_steps=max_steps)
        self._max_steps = max_steps

    async def plan(self, request: str) -> Plan:
        def validate(obj: Any) -> list[str]:
            return [str(p) for p in structural_problems(obj, max_steps=self._max_steps)]

        obj = await self._supervisor.ask_json(
            "plan",
            templates.PLAN,
            {"request": request},
            schema=self._schema,
            target="plan",
            validate=validate,
            coerce=coerce_plan,
        )
        return build_plan(obj)
