"""The supervisor: deterministic repair first (free), then at most two LLM repairs that see the errors."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from aeon.application.errors import (
    LLMContextExceeded,
    LLMEmptyAnswer,
    LLMTruncated,
    OutputFault,
    OutputProblem,
    UnrecoverableOutput,
)
from aeon.application.llm.gateway import LLMGateway
from aeon.application.llm.jsonfix import looks_truncated, parse_json
from aeon.application.llm.lax_plan import Coerced
from aeon.application.llm.prompts import PromptTemplate
from aeon.application.llm.prompts.profiles import BASE, PromptSet
from aeon.application.llm.retry_budget import MAX_LLM_REPAIRS
from aeon.application.plans.validation import step_schema, tool_problems
from aeon.application.policy import Described
from aeon.application.recorder import Recorder
from aeon.domain.llm import Message
from aeon.domain.plan import ExecutionMode, PlanStep
from aeon.domain.records import Counters, SupervisorAction
from aeon.domain.tools import ToolSpec

_CUT_OFF = OutputProblem(
    "the answer is cut off: it ends inside an unfinished JSON object, array or string", OutputFault.CUT_OFF
)
_NOT_JSON = OutputProblem("output is not JSON and could not be repaired deterministically", OutputFault.NOT_JSON)

Validator = Callable[[Any], list[str]]
Coercer = Callable[[Any], Coerced | None]


class Supervisor:
    """Turns raw model output into a validated object, or declares it unrecoverable. Never invents tools."""

    def __init__(
        self,
        gateway: LLMGateway,
        record: Recorder,
        counters: Counters,
        tools: Sequence[ToolSpec],
        described: Described | None = None,
        prompts: PromptSet = BASE,
    ) -> None:
        self.described = described or Described()  # every prompt it sends holds the tool descriptions
        self.prompts = prompts  # the templates of the model's prompt profile, for every service that asks it
        self._llm = gateway
        self._record = record
        self._counters = counters
        self._tools = list(tools)
        self._by_name = {t.name: t for t in tools}

    def _attempt(
        self, raw: str, validate: Validator, target: str, coerce: Coercer | None = None
    ) -> tuple[Any, list[str]]:
        outcome = parse_json(raw)
        if outcome is None:
            if looks_truncated(raw):
                return None, [_CUT_OFF]
            return None, [_NOT_JSON]
        value, repaired, changes = outcome.value, outcome.repaired, outcome.changes
        errors = validate(value)
        # asked of a valid answer too: a step naming `Calculator` is valid as a plan, yet calls no registered tool
        coerced = coerce(value) if coerce is not None else None
        if coerced is not None and not validate(coerced.value):
            value, repaired, changes, errors = coerced.value, True, [*changes, *coerced.changes], []
        if not errors and repaired:
            self._counters.deterministic_repairs += 1
            detail = "; ".join(["repaired without an LLM call", *changes])
            self._record.supervisor_action(SupervisorAction(kind="deterministic_repair", target=target, detail=detail))
        return value, errors

    async def ensure_valid(
        self,
        raw: str,
        *,
        target: str,
        validate: Validator,
        schema: Mapping[str, Any],
        coerce: Coercer | None = None,
    ) -> Any:
        """Return a value from `raw` that passes `validate`, repairing it if needed; raise UnrecoverableOutput.

        Deterministic repair comes first: JSON syntax, then `coerce` (lax shapes whose content is all there, asked of
        every answer). Each change is on the record (`deterministic_repair`). An answer cut off mid-object is never
        repaired deterministically (short of its final '}' alone, it is closed); it goes to the LLM repair.
        """
        value, errors = self._attempt(raw, validate, target, coerce)
        if not errors:
            return value
        current = raw
        for attempt in range(1, MAX_LLM_REPAIRS + 1):
            self._record.error(f"{target}: {'; '.join(errors)}")
            answer = await self._ask_repair(
                f"repair:{target}",
                self.prompts.repair_json,
                {"schema": json.dumps(schema), "broken": current.strip() or "(empty)", "problems": "; ".join(errors)},
                schema=schema,
                schema_name=target,
            )
            if isinstance(answer, list):  # cut off or empty: never sent to JSON repair
                errors = answer
                continue
            current = answer
            value, errors = self._attempt(current, validate, target, coerce)
            detail = "; ".join(errors) if errors else "repaired by the LLM"
            action = SupervisorAction(
                kind="llm_repair", target=target, attempt=attempt, succeeded=not errors, detail=detail
            )
            self._record.supervisor_action(action)
            if not errors:
                return value
        raise self._unrecoverable(target, errors)

    def _unrecoverable(self, target: str, errors: list[str]) -> UnrecoverableOutput:
        """The repairs are spent: the `unrecoverable` action on the record, and the error the caller raises."""
        self._record.supervisor_action(
            SupervisorAction(
                kind="unrecoverable", target=target, detail="; ".join(errors), succeeded=False, attempt=MAX_LLM_REPAIRS
            )
        )
        return UnrecoverableOutput(
            f"{target} could not be repaired after {MAX_LLM_REPAIRS} LLM repair attempts: {'; '.join(errors)}",
            target=target,
            errors=errors,
            llm_repairs=MAX_LLM_REPAIRS,
        )

    async def _ask_repair(
        self,
        purpose: str,
        template: PromptTemplate,
        values: Mapping[str, str],
        *,
        schema: Mapping[str, Any],
        schema_name: str,
    ) -> str | list[str]:
        """One LLM repair call: its text, or — when the answer was cut off or empty — the reason as the new errors."""
        try:
            completion = await self._llm.complete(
                purpose,
                [Message(role="user", content=template.render(values))],
                schema=self.prompts.schema_form(schema),
                schema_name=schema_name,
                stop=template.stop,
            )
        except (LLMTruncated, LLMEmptyAnswer) as exc:
            # a full context window would only fill up again: not a cut-off a second ask may fix
            kind = OutputFault.INVALID if isinstance(exc, LLMContextExceeded) else OutputFault.CUT_OFF
            return [OutputProblem(str(exc), kind)]
        self._counters.llm_repairs += 1
        return completion.text

    async def ask_json(
        self,
        purpose: str,
        template: PromptTemplate,
        values: Mapping[str, str],
        *,
        schema: Mapping[str, Any],
        target: str,
        validate: Validator,
        coerce: Coercer | None = None,
    ) -> Any:
        """Render `template`, ask for JSON under `schema` (stopping at the template's next example) and return the
        answer once it validates, repairing it as needed; raises UnrecoverableOutput."""
        completion = await self._llm.complete(
            purpose,
            [Message(role="user", content=template.render(values))],
            schema=self.prompts.schema_form(schema),
            schema_name=target,
            stop=template.stop,
        )
        return await self.ensure_valid(completion.text, target=target, validate=validate, schema=schema, coerce=coerce)

    async def repair_step(self, step: PlanStep, goal: str) -> PlanStep | None:
        """Rewrite a missing-tool or bad-argument step to use a registered tool; None when that fails.

        The LLM sees the full tool list with schemas and examples, the step and the goal. Its answer is accepted
        only if it names a registered tool with arguments that fit, and keeps the step id.
        """
        if not self._tools:
            return None
        names = sorted(self._by_name)
        schema = step_schema({"type": "string", "enum": names})
        schema["required"] = ["step_id", "description", "tool", "args"]
        step_json = json.dumps(
            {"step_id": step.step_id, "description": step.description, "tool": step.tool, "args": step.args}
        )
        errors = list(step.errors) or tool_problems(step, self._by_name)
        for attempt in range(1, MAX_LLM_REPAIRS + 1):
            answer = await self._ask_repair(
                f"repair_step:{step.step_id}",
                self.prompts.repair_step,
                {"goal": goal, "step": step_json, "problems": "; ".join(errors)},
                schema=schema,
                schema_name="step",
            )
            if isinstance(answer, list):  # cut off or empty: never sent to JSON repair
                errors = answer
                continue
            outcome = parse_json(answer)
            errors = self._step_problems(step, outcome.value) if outcome else ["answer is not JSON"]
            detail = "; ".join(errors) if errors else "now calls a registered tool"
            ok = outcome is not None and not errors
            action = SupervisorAction(
                kind="tool_repair", target=step.step_id, attempt=attempt, succeeded=ok, detail=detail
            )
            self._record.supervisor_action(action)
            if ok and outcome is not None:
                self._counters.tool_repairs += 1
                tool, args = outcome.value["tool"], dict(outcome.value.get("args") or {})
                repaired = msgspec.structs.replace(step, tool=tool, args=args, agent=None, mode=ExecutionMode.REPAIRED)
                self.described.mark([repaired])
                return repaired
            step_json = answer.strip() or step_json
        return None

    def _step_problems(self, step: PlanStep, obj: Any) -> list[str]:
        """Why a repair answer does not make `step` callable: a registered tool with arguments that fit."""
        if not isinstance(obj, dict) or not isinstance(obj.get("tool"), str):
            return ["answer must be a step object naming a tool"]
        candidate = msgspec.structs.replace(step, tool=obj["tool"], args=dict(obj.get("args") or {}), agent=None)
        return tool_problems(candidate, self._by_name)
