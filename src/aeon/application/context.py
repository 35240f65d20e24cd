"""Per-run context: correlation id, budget meter, counters and the cycle being recorded."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import msgspec

from aeon.application.errors import ApplicationError, BudgetExhausted
from aeon.application.ports import ClockPort, LoggerPort, ProgressPort
from aeon.domain.budget import BudgetLimits, BudgetState, ExpirationType
from aeon.domain.llm import Usage
from aeon.domain.phases import CONTEXT_SPEC, context_violations
from aeon.domain.records import OrchestrationState, SupervisorAction, ToolCall


class ContextViolation(ApplicationError):
    """The context of an LLM call breaks the propagation table (05 FR-012..021); never retried."""

    code = "AEON.CONTEXT.VIOLATION"


class Counters(msgspec.Struct, kw_only=True):
    llm_calls: int = 0
    deterministic_repairs: int = 0
    llm_repairs: int = 0
    tool_repairs: int = 0
    fallbacks: int = 0
    tool_errors: int = 0


class CycleBuffer(msgspec.Struct, kw_only=True):
    """What happened during the current cycle, flushed into one CycleRecord."""

    llm_output: list[str] = msgspec.field(default_factory=list)
    supervisor_actions: list[SupervisorAction] = msgspec.field(default_factory=list)
    tool_calls: list[ToolCall] = msgspec.field(default_factory=list)
    errors: list[str] = msgspec.field(default_factory=list)


class RunContext:
    """Everything one run shares across planner, supervisor and executor. Created by the orchestrator."""

    def __init__(
        self,
        *,
        correlation_id: str,
        request: str,
        limits: BudgetLimits,
        logger: LoggerPort,
        progress: ProgressPort,
        clock: ClockPort,
    ) -> None:
        self.correlation_id = correlation_id
        self.request = request
        self.budget = BudgetState.start(limits)
        self.logger = logger
        self.progress = progress
        self.clock = clock
        self.started_at = clock.now()
        self.t0 = clock.monotonic()
        self.counters = Counters()
        self.state = OrchestrationState(correlation_id=correlation_id, request=request, ttl_remaining=limits.ttl)
        self.cycle = CycleBuffer()
        self.phase = "PLAN"
        self.warnings: list[str] = []
        self.execution_start_timestamp = self.started_at.isoformat()
        self._anchor = {"correlation_id": correlation_id, "execution_start_timestamp": self.execution_start_timestamp}
        self.pass_number = 0
        self.context_key = "A"
        self.phase_context: dict[str, Any] = {}

    # -- phase context --------------------------------------------------------------------------------------------
    def enter(self, key: str, **fields: Any) -> None:
        """Set the process context of the (sub-)phase now running: the base fields plus this phase's inputs."""
        rule = CONTEXT_SPEC[key]
        self.context_key = key
        self.phase_context = {
            "request": self.request,
            "pass_number": self.pass_number,
            "phase": rule.phase.value,
            "ttl_remaining": self.budget.ttl_remaining,
            **self._anchor,
            **fields,
        }

    @property
    def phase_letter(self) -> str:
        """The contract phase (A, B, C, D) now running."""
        return CONTEXT_SPEC[self.context_key].phase.value

    def check_context(self) -> None:
        """Raise ContextViolation unless the current context satisfies its row of the propagation table."""
        problems = context_violations(
            CONTEXT_SPEC[self.context_key], self.phase_context, anchor=self._anchor, request=self.request
        )
        if problems:
            raise ContextViolation(f"phase {self.context_key} context: {'; '.join(problems)}")

    # -- budget -------------------------------------------------------------------------------------------------
    def _tick(self) -> None:
        self.budget.elapsed_seconds = self.clock.monotonic() - self.t0

    def remaining_seconds(self) -> float | None:
        """Wall-clock seconds left under run.max_seconds (never negative), or None without that cap."""
        limit = self.budget.limits.max_seconds
        if limit is None:
            return None
        self._tick()
        return max(limit - self.budget.elapsed_seconds, 0.0)

    def out_of_time(self, where: str) -> BudgetExhausted:
        """The expiry for work cut off by run.max_seconds while it was still running."""
        self._tick()
        cap = f"max_seconds ({self.budget.limits.max_seconds:g})"
        return BudgetExhausted(f"{cap} ran out {where}", expiration_type=ExpirationType.MID_PHASE, cap="max_seconds")

    def check_caps(self, where: str, *, needs_llm: bool = True) -> None:
        """Raise BudgetExhausted (mid-phase) when a cap this work needs is used up.

        Called before every LLM call and before every step. A step that needs no LLM call (a registered tool with
        valid arguments) may still run when only the call cap is spent; token and time caps stop everything.
        """
        self._tick()
        b, lim = self.budget, self.budget.limits
        if needs_llm and b.llm_calls >= lim.max_llm_calls:
            name, value = "max_llm_calls", f"{lim.max_llm_calls}"
        elif lim.max_tokens is not None and b.prompt_tokens + b.completion_tokens >= lim.max_tokens:
            name, value = "max_tokens", f"{lim.max_tokens}"
        elif lim.max_seconds is not None and b.elapsed_seconds >= lim.max_seconds:
            name, value = "max_seconds", f"{lim.max_seconds:g}"
        else:
            return
        raise BudgetExhausted(f"{name} ({value}) exhausted {where}", expiration_type=ExpirationType.MID_PHASE, cap=name)

    def record_failed_call(self, usage: Usage | None = None) -> None:
        """A call that failed still counts against the call cap, and any tokens it reported against the token cap."""
        self.budget.llm_calls += 1
        self.counters.llm_calls = self.budget.llm_calls
        if usage is not None:
            self.budget.prompt_tokens += usage.prompt_tokens
            self.budget.completion_tokens += usage.completion_tokens
            self.budget.cached_tokens += usage.cached_tokens

    def record_llm_call(self, usage: Usage, text: str) -> None:
        """Account one finished LLM call; over-spent token or time caps end the phase (checked after every call)."""
        b = self.budget
        b.llm_calls += 1
        b.prompt_tokens += usage.prompt_tokens
        b.completion_tokens += usage.completion_tokens
        b.cached_tokens += usage.cached_tokens
        self.counters.llm_calls = b.llm_calls
        self.cycle.llm_output.append(text)
        self.state.llm_outputs.append(text)
        self._tick()
        lim = b.limits
        over_tokens = lim.max_tokens is not None and b.prompt_tokens + b.completion_tokens > lim.max_tokens
        over_time = lim.max_seconds is not None and b.elapsed_seconds > lim.max_seconds
        if over_tokens or over_time:
            name = "max_tokens" if over_tokens else "max_seconds"
            cap = f"max_tokens ({lim.max_tokens})" if over_tokens else f"max_seconds ({lim.max_seconds:g})"
            raise BudgetExhausted(
                f"{cap} exceeded after an LLM call", expiration_type=ExpirationType.MID_PHASE, cap=name
            )

    # -- recording ----------------------------------------------------------------------------------------------
    def supervisor_action(self, action: SupervisorAction) -> None:
        self.cycle.supervisor_actions.append(action)
        self.state.supervisor_actions.append(action)
        self.logger.emit("supervisor_action", **msgspec.to_builtins(action))
        self.notify("supervisor", msgspec.to_builtins(action))

    def tool_call(self, call: ToolCall) -> None:
        self.cycle.tool_calls.append(call)
        self.state.tool_history.append(call)

    def error(self, message: str) -> None:
        self.cycle.errors.append(message)

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        self.logger.emit("warning", message=message)
        self.notify("warning", {"message": message})

    def notify(self, event: str, data: Mapping[str, Any]) -> None:
        with contextlib.suppress(Exception):  # a progress display must never break a run
            self.progress.update(event, data)

    def take_cycle(self) -> CycleBuffer:
        buf, self.cycle = self.cycle, CycleBuffer()
        return buf
