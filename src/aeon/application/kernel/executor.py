"""The executor: runs one step by tool, by LLM reasoning, or by repair then fallback."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from aeon.application.errors import MemoryStoreError, ToolNotFound
from aeon.application.kernel.approvals import Approvals
from aeon.application.llm.calling import ToolTurn
from aeon.application.llm.gateway import LLMGateway
from aeon.application.llm.jsonfix import parse_json
from aeon.application.llm.prompt_budget import Part, PromptBudget
from aeon.application.llm.prompts import PromptTemplate
from aeon.application.llm.supervisor import Supervisor
from aeon.application.plans.outputs import output_verdict
from aeon.application.plans.validation import ToolCheck, ToolResolver
from aeon.application.ports import MemoryPort, ToolPort
from aeon.application.schemas import as_text
from aeon.application.tracing import tool_attributes, tool_outcome
from aeon.domain.approval import ApprovalDecision
from aeon.domain.llm import Message
from aeon.domain.log_pass import FallbackRecord, MemoryErrorRecord
from aeon.domain.plan import ClarityState, ExecutionMode, Plan, PlanStep, StepStatus
from aeon.domain.progress import StepEnded, StepFallback, StepRepaired, StepStarted
from aeon.domain.provenance import fence
from aeon.domain.records import ToolCall
from aeon.domain.tools import OutputCheck

MEMORY_PREFIX = "step:"
_UNAVAILABLE = "(memory unavailable)"
HANDOFF_INLINE = 200  # a tool output up to this long is quoted in its step's handoff; a longer one is pointed at
CONTEXT = "incoming context"  # the handoff's part name in a prompt_clipped record
REASON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "minLength": 1, "maxLength": 600},
        "clarity_state": {"type": "string", "enum": [c.value for c in ClarityState]},
        "handoff_to_next": {"type": "string", "maxLength": 300},
    },
    "required": ["answer", "clarity_state", "handoff_to_next"],
}


class Executor:
    """Executes steps strictly one at a time; a failing tool fails its step and the plan goes on."""

    def __init__(
        self,
        *,
        tools: ToolPort,
        resolver: ToolResolver,
        memory: MemoryPort,
        gateway: LLMGateway,
        supervisor: Supervisor,
        run: ToolTurn,
        approvals: Approvals,
        budget: PromptBudget,
        output_check: OutputCheck = "warn",
    ) -> None:
        self._tools = tools
        self._resolver = resolver
        self._memory = memory
        self._llm = gateway
        self._supervisor = supervisor
        self._run = run
        self._record = run.record
        self._approvals = approvals
        self._output_check: OutputCheck = output_check
        self._budget = budget

    def resolve(self, step: PlanStep) -> ToolCheck:
        """How the step resolves against the registry; `runnable` means it can run without any LLM call."""
        return self._resolver.check(step)

    async def before_pass(self, plan: Plan) -> None:
        """The policy on the plan's data flow, asked before the pass's first tool call (Approvals.before_pass)."""
        await self._approvals.before_pass(plan)

    async def execute(self, plan: Plan, step: PlanStep, check: ToolCheck | None = None) -> PlanStep:
        """Run `step` (pending → running → complete/failed) and return the step object now in the plan; `check` is
        the step's resolution when the caller has it already."""
        self._run.current_step = step.step_id
        if waiting := blocked_by(plan, step):  # dependencies must be complete first (04 PlanStep)
            step.block(waiting)
            self._step_end(step)
            return step
        if not step.incoming_context:
            step.incoming_context = _handoff_before(plan, step)
        step.transition(StepStatus.RUNNING)
        started = StepStarted(
            step_id=step.step_id, description=step.description, index=step.step_index, total=step.total_steps
        )
        self._record.notify(started)
        step = await self._choose_mode(plan, step, check or self._resolver.check(step))
        if step.mode in (ExecutionMode.TOOL, ExecutionMode.REPAIRED):
            await self._run_tool(plan, step)
        else:
            await self._run_llm(plan, step)
        await self._remember(step)
        self._step_end(step)
        return step

    async def _choose_mode(self, plan: Plan, step: PlanStep, check: ToolCheck) -> PlanStep:
        """By tool, by LLM reasoning, or — when the tool is missing or its arguments do not fit — repair then
        fallback; returns the step object now in the plan (a repair replaces it)."""
        if check.runnable:
            step.mode = ExecutionMode.TOOL
            return step
        if step.tool is None and step.agent == "llm":
            step.mode = ExecutionMode.LLM
            return step
        if check.spec is not None:  # a registered tool called with arguments that do not fit
            step.errors = check.problems
        elif not step.errors:  # found only now (e.g. unregistered mid-run): validation did not warn yet
            step.errors = [f"Tool '{step.tool}' not found in registry" if step.tool else "step names no tool"]
            self._record.warn(f"step {step.step_id}: {'; '.join(step.errors)}")
        return await self._repair_or_fallback(plan, step)

    def _step_end(self, step: PlanStep) -> None:
        running = step.status is not StepStatus.INVALID or step.mode is not None
        mode, output = (step.mode, step.step_output) if running else (None, None)
        ended = StepEnded(step_id=step.step_id, status=step.status, mode=mode, output=output, errors=tuple(step.errors))
        self._record.notify(ended)

    async def _repair_or_fallback(self, plan: Plan, step: PlanStep) -> PlanStep:
        repaired = await self._supervisor.repair_step(step, plan.goal)
        if repaired is not None:
            self._record.notify(StepRepaired(step_id=step.step_id, tool=repaired.tool, args=repaired.args))
            return plan.replace_step(step.step_id, repaired)
        step.mode = ExecutionMode.FALLBACK
        self._run.state.fell_back()
        if step.tool is not None:  # LLM text never passes for a tool result
            step.notes.append(f"tool {step.tool!r} was not called: this output is LLM text in its place, unverified")
            self._record.warn(f"step {step.step_id}: tool {step.tool!r} was not called; its output will be LLM text")
        self._record.notify(StepFallback(step_id=step.step_id))
        self._record.log(FallbackRecord(step_id=step.step_id, reason="; ".join(step.errors)))
        return step

    async def _run_tool(self, plan: Plan, step: PlanStep) -> None:
        assert step.tool is not None
        spec = self._tools.get(step.tool)
        admitted = await self._approvals.admit(plan, step, spec)
        if admitted.denied is not None or admitted.problem is not None:
            self._not_called(step, admitted.denied, admitted.problem)
            return
        args = admitted.args
        origin = msgspec.UNSET if step.origin.trusted else step.origin
        call = ToolCall(step_id=step.step_id, tool=step.tool, args=dict(args), origin=origin)
        with self._run.tracer.span(f"execute_tool {step.tool}", tool_attributes(self._run.tracer, step)) as span:
            try:
                result = await self._tools.invoke(step.tool, args, time_left=self._run.remaining_seconds())
                output, error = result.output, result.error
            except ToolNotFound as exc:  # unregistered while running: reported like any tool failure
                result, output, error = None, None, str(exc)
            mismatch = None
            if result is not None and error is None and spec is not None:
                numbers = [c.path for c in result.converted if c.number]
                error, mismatch = output_verdict(spec, output, check=self._output_check, numbers=numbers)
            tool_outcome(self._run.tracer, span, output, error)
        label = self._approvals.output_label(spec, step)
        call.output, call.error, call.label = output, error, msgspec.UNSET if label.trusted else label
        call.supplied_by = result.supplied_by if result is not None else None
        notes = [c.note() for c in result.converted] if result is not None else []
        if mismatch is not None:  # the return annotation's fault, not the call's: the output stands
            notes.append(mismatch)
            self._record.warn(f"step {step.step_id}: tool {step.tool!r} {mismatch}")
        if call.supplied_by is not None:
            step.mode = ExecutionMode.OPERATOR
            notes.append(f"output supplied by the {call.supplied_by}: the tool was not run for it")
        call.notes, step.notes = notes, list(notes)
        self._record.tool_call(call)
        step.output_label = label  # a failed call's error text came from the tool too
        if error is None:
            step.step_output = output
            step.handoff_to_next = f"{step.step_id} ({step.tool}) returned {_short(output)}"
            step.transition(StepStatus.COMPLETE)
        else:
            self._run.state.tool_failed()
            step.errors.append(f"tool {step.tool!r} failed: {error}")
            self._record.error(f"step {step.step_id}: tool {step.tool!r} failed: {error}")
            step.transition(StepStatus.FAILED)
        if result is not None and result.cut_at_time_left:  # the run's time ran out, not the tool's: the run ends
            raise self._run.out_of_time(f"during tool {step.tool!r} of step {step.step_id}")

    def _not_called(self, step: PlanStep, denied: ApprovalDecision | None, problem: str | None) -> None:
        """The call was denied by a person, or its references could not give it arguments that fit: the step fails."""
        if denied is not None:
            step.mode = ExecutionMode.DENIED
            step.errors.append(f"denied by {denied.by}: {denied.reason or 'no reason given'}")
            self._record.error(f"step {step.step_id}: tool {step.tool!r} call denied by {denied.by}")
        else:
            step.errors.append(f"tool {step.tool!r} not called: {problem}")
            self._record.error(f"step {step.step_id}: tool {step.tool!r} not called: {problem}")
        step.transition(StepStatus.FAILED)

    async def _run_llm(self, plan: Plan, step: PlanStep) -> None:
        """LLM reasoning (agent: llm) and fallback: the step description is the prompt, with memory context.

        The answer carries the step's clarity_state and handoff for the next step; BLOCKED marks the step invalid.
        A plain-text answer (e.g. a scripted one) counts as a CLEAR answer.
        """
        purpose = "fallback" if step.mode is ExecutionMode.FALLBACK else "reason"
        prompts = self._supervisor.prompts
        entries = await self._memory_entries()
        prompt = _reason_prompt(self._budget, f"{purpose}:{step.step_id}", plan, step, entries, prompts.reason)
        completion = await self._llm.complete(
            f"{purpose}:{step.step_id}",
            [Message(role="user", content=prompt)],
            schema=prompts.schema_form(REASON_SCHEMA),
            schema_name="step_result",
            stop=prompts.reason.stop,
        )
        parsed = parse_json(completion.text)
        obj = parsed.value if parsed and isinstance(parsed.value, dict) and "answer" in parsed.value else None
        step.step_output = str(obj["answer"]).strip() if obj else completion.text.strip()
        step.output_label = self._run.state.seen.join(step.origin)  # its prompt held every earlier output
        clarity = str(obj.get("clarity_state", "")).upper() if obj else ""
        step.clarity_state = ClarityState(clarity) if clarity in ClarityState.__members__ else ClarityState.CLEAR
        step.handoff_to_next = str(obj.get("handoff_to_next") or "") if obj else ""
        if step.clarity_state is ClarityState.BLOCKED:
            step.errors.append("the step reported BLOCKED: it cannot be done with what is known")
            step.transition(StepStatus.INVALID)
        else:
            step.transition(StepStatus.COMPLETE)

    async def _memory_entries(self) -> dict[str, str] | None:
        """What earlier steps left in memory, step id → its JSON text, in the order written; None when unavailable."""
        try:
            entries = await self._memory.search(MEMORY_PREFIX)
        except MemoryStoreError as exc:
            self._record.error(f"memory search failed: {exc}")
            return None
        return {k.removeprefix(MEMORY_PREFIX): as_text(v) for k, v in entries.items()}

    async def _remember(self, step: PlanStep) -> None:
        self._run.state.labelled(step, f"{MEMORY_PREFIX}{step.step_id}")
        value: dict[str, Any] = {"status": step.status.value, "output": step.step_output}
        if step.status is StepStatus.FAILED:  # an untrusted tool's error text reaches later prompts fenced as data
            label, errors = step.output_label, list(step.errors)
            value["errors"] = errors if label.trusted else [fence(e, ", ".join(label.sources)) for e in errors]
        try:
            await self._memory.write(f"{MEMORY_PREFIX}{step.step_id}", value)
        except MemoryStoreError as exc:  # a memory failure is logged; the step's own result stands
            self._record.error(f"memory write failed for step {step.step_id}: {exc}")
            self._record.log(MemoryErrorRecord(step_id=step.step_id, message=str(exc)))


def blocked_by(plan: Plan, step: PlanStep) -> list[str]:
    """Dependencies of `step` that are not complete (missing, later, failed or invalid steps)."""
    done = {s.step_id for s in plan.steps if s.status is StepStatus.COMPLETE}
    return [d for d in step.dependencies if d not in done]


def _short(value: Any) -> str:
    """A tool output as its step's handoff quotes it: whole when short, else its size; the output itself reaches the
    next prompts whole (within the prompt budget) as the step's entry under "Earlier results"."""
    text = as_text(value)
    return text if len(text) <= HANDOFF_INLINE else f"{len(text):,} characters, shown under Earlier results"


def _reason_prompt(
    budget: PromptBudget,
    purpose: str,
    plan: Plan,
    step: PlanStep,
    entries: dict[str, str] | None,
    reason: PromptTemplate,
) -> str:
    """The REASON prompt, the handoff and the memory entries whole within the budget: the handoff first, then the
    entries newest first (the order the budget favours when it must clip)."""

    def values(texts: Mapping[str, str]) -> dict[str, str]:
        shown = "\n".join(fence(texts[k], f"step {k}") for k in entries or {})
        memory = _UNAVAILABLE if entries is None else f"\n{shown}" if shown else "(none yet)"
        context = fence(texts[CONTEXT], "the previous step") if CONTEXT in texts else "(none)"  # measured fenced
        return {"goal": plan.goal, "step": step.description, "context": context, "memory": memory}

    handoff = [Part(CONTEXT, step.incoming_context)] if step.incoming_context else []
    parts = handoff + [Part(k, v) for k, v in reversed((entries or {}).items())]
    texts = budget.fit(purpose, parts, lambda texts: reason.fill(values(texts)))
    return reason.render(values(texts))


def _handoff_before(plan: Plan, step: PlanStep) -> str:
    """What the nearest earlier executed step handed on, as this step's incoming context."""
    i = plan.steps.index(step)
    for prev in reversed(plan.steps[:i]):
        if prev.handoff_to_next:
            return prev.handoff_to_next
    return ""
