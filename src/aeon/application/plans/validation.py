"""Structural validation of plans and tool calls: every problem is reported with the step it belongs to."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

import msgspec

from aeon.application.plans.references import has_references, literal_problems
from aeon.application.schemas import args_problems as literal_args_problems
from aeon.application.schemas import schema_problems
from aeon.domain.plan import Plan, PlanStep, StepStatus, shown_id, step_id_problem
from aeon.domain.tools import ToolSpec

# Any plan, hand-written or the model's: every cycle record carries the plan, so the log grows with steps².
# The model is asked for far fewer (run.max_plan_steps); a hand-written plan is bound only by this.
MAX_PLAN_STEPS = 200


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    """One thing wrong with a plan. `structural` problems make the plan unusable; the others are step errors."""

    step_id: str | None
    message: str
    structural: bool = True

    def __str__(self) -> str:
        return f"step {shown_id(self.step_id)}: {self.message}" if self.step_id else self.message


def plan_schema(tool_names: Sequence[str], *, max_steps: int = MAX_PLAN_STEPS, goal: bool = True) -> dict[str, Any]:
    """The JSON schema a plan must satisfy. `goal=False`: the schema of a model's plan answer, sent to providers that
    constrain output: no goal (the planner sets the request as the goal), since a model only copied the request
    there, and a grammar-constrained server generates every token of it."""
    tool: dict[str, Any] = {"type": "string"}
    if tool_names:
        tool["enum"] = sorted(tool_names)
    steps = {"type": "array", "minItems": 1, "maxItems": max_steps, "items": step_schema(tool)}
    if not goal:
        return {"type": "object", "properties": {"steps": steps}, "required": ["steps"]}
    return {
        "type": "object",
        "properties": {"goal": {"type": "string", "minLength": 1}, "steps": steps},
        "required": ["goal", "steps"],
    }


def step_schema(tool: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "step_id": {"type": "string", "minLength": 1},
            "description": {"type": "string", "minLength": 1},
            "tool": dict(tool or {"type": "string"}),
            "args": {"type": "object"},
            "agent": {"type": "string", "enum": ["llm"]},
            "dependencies": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
        },
        "required": ["step_id", "description"],
    }


def args_problems(spec: ToolSpec, args: Mapping[str, Any]) -> list[str]:
    """Argument problems against the tool's input_schema, as one-line messages (schemas.args_problems); an argument
    passed by reference (`$from`) is checked once resolved, right before the call."""
    if not has_references(args):
        return literal_args_problems(spec, args)
    return [f"args for tool {spec.name!r} invalid at {path}: {msg}" for path, msg in literal_problems(spec, args)]


def structural_problems(obj: Any, *, max_steps: int = MAX_PLAN_STEPS, goal: bool = True) -> list[Problem]:
    """Problems that stop `obj` from being a plan at all: wrong shape, missing fields, too many steps, duplicate
    step ids. `goal=False`: a model's plan answer, which has no goal (see plan_schema)."""
    problems: list[Problem] = []
    if not isinstance(obj, dict):
        return [Problem(step_id=None, message=f"plan must be a JSON object, got {type(obj).__name__}")]
    cleaned = _without_nulls(obj)
    if isinstance(many := cleaned.get("steps"), list) and len(many) > max_steps:
        too_many = f"steps: has {len(many)} items, more than the {max_steps} allowed"
        problems.append(Problem(step_id=None, message=too_many))
        cleaned = {**cleaned, "steps": many[:max_steps]}  # a 1 MiB plan holds 10,000 steps: the schema sees 200
    if not _fits_plan_shape(cleaned, max_steps, goal):  # the schema is asked only for a plan that may break it
        for path, msg in schema_problems(cleaned, plan_schema([], max_steps=max_steps, goal=goal)):
            problems.append(Problem(step_id=_step_id_at(obj, path), message=f"{path}: {msg}"))
    steps = obj.get("steps")
    if isinstance(steps, list):
        seen: set[str] = set()
        for step in steps:
            sid = step.get("step_id") if isinstance(step, dict) else None
            if isinstance(sid, str):
                if problem := step_id_problem(sid):
                    problems.append(Problem(step_id=sid, message=problem))
                if sid in seen:
                    problems.append(Problem(step_id=sid, message=f"duplicate step_id {sid!r}"))
                seen.add(sid)
    return problems


_OPTIONAL = ("tool", "agent", "args", "dependencies", "provides")


class _StepShape(msgspec.Struct):
    """`step_schema()` with no tool names, as a msgspec type: what it accepts, the schema accepts (property-tested)."""

    step_id: Annotated[str, msgspec.Meta(min_length=1)]
    description: Annotated[str, msgspec.Meta(min_length=1)]
    tool: str | msgspec.UnsetType = msgspec.UNSET
    args: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    agent: Literal["llm"] | msgspec.UnsetType = msgspec.UNSET
    dependencies: Annotated[list[str], msgspec.Meta(max_length=10)] | msgspec.UnsetType = msgspec.UNSET


class _AnswerShape(msgspec.Struct):
    steps: Annotated[list[_StepShape], msgspec.Meta(min_length=1)]


class _PlanShape(_AnswerShape):
    goal: Annotated[str, msgspec.Meta(min_length=1)]


def _fits_plan_shape(obj: dict[str, Any], max_steps: int, goal: bool) -> bool:
    """True when the plan surely satisfies `plan_schema([], goal=goal)` — checked in C, about 50 times faster than
    jsonschema. False means only "ask the schema", which then names every problem."""
    try:
        shape = msgspec.convert(obj, _PlanShape if goal else _AnswerShape)
    except msgspec.ValidationError:
        return False
    return len(shape.steps) <= max_steps


def _without_nulls(obj: dict[str, Any]) -> dict[str, Any]:
    """A null optional step field means "absent" (models write `"tool": null`); only for validation."""
    steps = obj.get("steps")
    if not isinstance(steps, list):
        return obj
    cleaned = [
        {k: v for k, v in s.items() if not (k in _OPTIONAL and v is None)} if isinstance(s, dict) else s for s in steps
    ]
    return {**obj, "steps": cleaned}


def _step_id_at(obj: Mapping[str, Any], path: str) -> str | None:
    parts = path.split("/")
    if len(parts) >= 2 and parts[0] == "steps" and parts[1].isdigit():
        steps = obj.get("steps") or []
        i = int(parts[1])
        if i < len(steps) and isinstance(steps[i], dict):
            sid = steps[i].get("step_id")
            return sid if isinstance(sid, str) else f"#{i + 1}"
    return None


class ToolCheck(msgspec.Struct, frozen=True, kw_only=True):
    """How a step resolves against the registry: the tool's spec (None for LLM steps and unknown tools) and what is
    wrong with the call. `runnable` means the tool can be called as written, without any LLM call."""

    spec: ToolSpec | None
    problems: list[str]

    @property
    def runnable(self) -> bool:
        return self.spec is not None and not self.problems


def check_tool(step: PlanStep, lookup: Callable[[str], ToolSpec | None]) -> ToolCheck:
    """The one way a step's tool is resolved: missing or unknown tool, bad arguments."""
    if step.tool is None:
        problems = (
            [] if step.agent == "llm" else [f"step {step.step_id!r} names no tool and is not an 'agent: llm' step"]
        )
        return ToolCheck(spec=None, problems=problems)
    spec = lookup(step.tool)
    if spec is None:
        return ToolCheck(spec=None, problems=[f"Tool '{step.tool}' not found in registry"])
    return ToolCheck(spec=spec, problems=args_problems(spec, step.args))


class ToolResolver:
    """`check_tool` for one run, remembered per tool and arguments: a step's call is checked once, not once per look
    (validation, the caps check before the step, the choice of how to run it). The tool is looked up every time, so a
    tool registered or removed mid-run is seen; a memo entry holds only for the spec it was made with."""

    def __init__(self, lookup: Callable[[str], ToolSpec | None], *, size: int = 1024) -> None:
        self._lookup, self._size = lookup, size
        self._memo: dict[tuple[str, bytes], ToolCheck] = {}

    def check(self, step: PlanStep) -> ToolCheck:
        if step.tool is None:
            return check_tool(step, self._lookup)
        try:
            key = (step.tool, msgspec.json.encode(step.args))
        except (TypeError, msgspec.EncodeError):  # arguments JSON cannot hold: checked each time
            return check_tool(step, self._lookup)
        hit = self._memo.get(key)
        if hit is not None and hit.spec is not None and hit.spec is self._lookup(step.tool):
            return ToolCheck(spec=hit.spec, problems=list(hit.problems))
        found = check_tool(step, self._lookup)
        if len(self._memo) >= self._size:
            self._memo.clear()
        self._memo[key] = found
        return ToolCheck(spec=found.spec, problems=list(found.problems))


def tool_problems(step: PlanStep, tools: Mapping[str, ToolSpec]) -> list[str]:
    """Missing or unknown tool and bad arguments for one step. Empty for LLM steps."""
    return check_tool(step, tools.get).problems


def build_plan(obj: Mapping[str, Any], *, goal: str | None = None) -> Plan:
    """Turn a structurally valid plan object into a Plan. Unknown keys are ignored; statuses start pending. `goal`:
    the plan's goal when `obj` is a model's answer, which carries none (the request)."""
    steps = [
        PlanStep(
            step_id=s["step_id"],
            description=s["description"],
            tool=s.get("tool") or None,
            agent=s.get("agent") or None,
            args=dict(s.get("args") or {}),
            dependencies=list(s.get("dependencies") or []),
            provides=list(s.get("provides") or []),
            requires_approval=s.get("requires_approval") is True,
        )
        for s in obj["steps"]
    ]
    return Plan(goal=obj["goal"] if goal is None else goal, steps=steps)


def annotate(plan: Plan, tools: ToolResolver) -> list[Problem]:
    """Fill every step's `errors` with its tool problems and return them; those steps go to the supervisor."""
    out: list[Problem] = []
    for step in plan.steps:
        if step.status is not StepStatus.PENDING:
            continue  # executed steps keep their record; invalid ones wait for refinement
        step.errors = tools.check(step).problems
        out.extend(Problem(step_id=step.step_id, message=m, structural=False) for m in step.errors)
    return out
