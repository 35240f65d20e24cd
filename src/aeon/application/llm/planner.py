"""The planner: one LLM call that turns a request into a Plan (or, at the start of a run, into its TaskProfile and its
Plan together), supervised into shape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aeon.application.errors import OutputFault, OutputProblem, UnrecoverableOutput, missing_field
from aeon.application.llm.lax_plan import Coerced, coerce_plan
from aeon.application.llm.profiler import PROFILE_SCHEMA, build_profile, profile_problems
from aeon.application.llm.prompts import PromptTemplate, templates
from aeon.application.llm.supervisor import Supervisor
from aeon.application.plans.validation import build_plan, plan_schema, structural_problems
from aeon.domain.plan import Plan
from aeon.domain.profile import TaskProfile
from aeon.domain.tools import ToolSpec

PROFILE_TARGET = "task_profile"  # the target an unrepairable profile half is reported under (an incomplete profile)


def profile_and_plan_schema(tool_names: Sequence[str], *, max_steps: int) -> dict[str, Any]:
    """The schema of phase A's one answer: the task profile first, then the plan (so the answer ends with the plan)."""
    plan = plan_schema(tool_names, max_steps=max_steps, goal=False)
    return {"type": "object", "properties": {"profile": PROFILE_SCHEMA, "plan": plan}, "required": ["profile", "plan"]}


def _within(half: str, problems: Sequence[str]) -> list[str]:
    """`problems` of one half of a combined answer, named by that half, each keeping its fault kind."""
    return [
        OutputProblem(f"{half}: {p}", p.kind if isinstance(p, OutputProblem) else OutputFault.INVALID) for p in problems
    ]


def _asked(template: PromptTemplate, request: str, conversation: str | None) -> tuple[PromptTemplate, dict[str, str]]:
    """The template and slot values for `request`, after a thread's `conversation` when there is one."""
    if not conversation:
        return template, {"request": request}
    return templates.in_thread(template), {"request": request, "conversation": conversation}


class Planner:
    """Asks the model for a plan listing every registered tool, and lets the supervisor repair its answer."""

    def __init__(self, supervisor: Supervisor, tools: Sequence[ToolSpec], *, max_steps: int) -> None:
        self._supervisor = supervisor
        self._schema = plan_schema([t.name for t in tools], max_steps=max_steps, goal=False)
        self._both_schema = profile_and_plan_schema([t.name for t in tools], max_steps=max_steps)
        self._max_steps = max_steps
        self._tools = {t.name: t for t in tools}

    def _coerce(self, obj: Any) -> Coerced | None:
        return coerce_plan(obj, self._tools)

    def _plan_problems(self, obj: Any) -> list[str]:
        """What stops a model's plan answer from being a plan; it has no goal (the request is its goal)."""
        return [str(p) for p in structural_problems(obj, max_steps=self._max_steps, goal=False)]

    def _setting_named(self, exc: UnrecoverableOutput, target: str) -> UnrecoverableOutput:
        """`exc`, saying which setting to change when the plan stayed longer than run.max_plan_steps allows (the
        model was told the cap; the user may raise it)."""
        message = str(exc)
        if f"more than the {self._max_steps} allowed" in message:
            message += f" (run.max_plan_steps is {self._max_steps}: raise it in the config's run section)"
        return UnrecoverableOutput(message, target=target, errors=exc.errors, llm_repairs=exc.llm_repairs)

    async def plan(self, request: str, conversation: str | None = None) -> Plan:
        """The plan for `request`; `conversation`: a thread's conversation so far, shown before it."""
        template, values = _asked(self._supervisor.prompts.plan, request, conversation)
        try:
            obj = await self._supervisor.ask_json(
                "plan",
                template,
                values,
                schema=self._schema,
                target="plan",
                validate=self._plan_problems,
                coerce=self._coerce,
            )
        except UnrecoverableOutput as exc:
            raise self._setting_named(exc, exc.target) from exc
        return self._written(build_plan(obj, goal=request))

    async def profile_and_plan(self, request: str, conversation: str | None = None) -> tuple[TaskProfile, Plan]:
        """Phase A in one call: the task profile (version 1) and the plan, asked together and checked half by half.

        Raises UnrecoverableOutput with target `task_profile` when, after repair, the profile half is still
        incomplete; with target `plan` otherwise (an answer that is not JSON is a malformed plan)."""
        failing: set[str] = set()

        def validate(obj: Any) -> list[str]:
            failing.clear()
            if not isinstance(obj, dict):
                return ["the answer must be a JSON object with 'profile' and 'plan'"]
            problems: list[str] = []
            for half, check in (("profile", profile_problems), ("plan", self._plan_problems)):
                found = _within(half, check(obj[half])) if half in obj else [missing_field(f"'{half}' is required")]
                if found:
                    failing.add(half)
                problems += found
            return problems

        def coerce(obj: Any) -> Coerced | None:
            lax = self._coerce(obj.get("plan")) if isinstance(obj, dict) else None
            return None if lax is None else Coerced({**obj, "plan": lax.value}, lax.changes)

        template, values = _asked(self._supervisor.prompts.profile_and_plan, request, conversation)
        try:
            obj = await self._supervisor.ask_json(
                "profile_and_plan",
                template,
                values,
                schema=self._both_schema,
                target="profile_and_plan",
                validate=validate,
                coerce=coerce,
            )
        except UnrecoverableOutput as exc:
            # an answer left unreadable is a malformed plan (retryable), whichever half was wrong before
            unread = exc.faults <= {OutputFault.NOT_JSON, OutputFault.CUT_OFF}
            target = PROFILE_TARGET if "profile" in failing and not unread else "plan"
            raise self._setting_named(exc, target) from exc
        return build_profile(obj["profile"], version=1), self._written(build_plan(obj["plan"], goal=request))

    def _written(self, plan: Plan) -> Plan:
        """The plan its prompt wrote: each step labelled with the untrusted tool descriptions that prompt held."""
        self._supervisor.described.mark(plan.steps)
        return plan
