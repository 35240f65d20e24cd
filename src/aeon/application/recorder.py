"""The recorder: what a run does, as typed calls, turned into event-log records and live progress.

This is the one place where the kernel's structs become log records (aeon.domain.audit_log) and progress events
(aeon.domain.progress), and where a cycle's LLM outputs, supervisor actions, tool calls and errors are gathered into
its cycle record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from aeon.application.ports import LoggerPort, ProgressPort
from aeon.application.redaction import NO_SECRETS, Redactor
from aeon.domain.advisories import Advisory
from aeon.domain.evaluation import ConvergenceAssessment
from aeon.domain.expiry import TTLExpirationResponse
from aeon.domain.ledger import CallEntry
from aeon.domain.llm import Completion
from aeon.domain.log_llm import LLMCallRecord
from aeon.domain.log_pass import AdvisoryRecord, CycleRecord, RefinementRecord, SupervisorActionRecord, ToolCallRecord
from aeon.domain.log_records import LogRecord
from aeon.domain.log_run import RunEndRecord, TtlExpiredRecord, WarningRecord
from aeon.domain.phases import PassPhase
from aeon.domain.plan import Plan
from aeon.domain.progress import Evaluated, PlanMade, ProgressEvent, Refined, SupervisorActed, Warned
from aeon.domain.records import SupervisorAction, ToolCall
from aeon.domain.refinement import ActionOutcome
from aeon.domain.run_state import RunState

if TYPE_CHECKING:
    from aeon.application.results import RunResult

plain = msgspec.to_builtins


def fields(record: msgspec.Struct) -> dict[str, Any]:
    """A domain struct's fields, values left as they are (the log encodes Structs itself), to build the log record
    that carries them field for field; a tagged union's tag under its tag field."""
    config = record.__struct_config__
    out: dict[str, Any] = {config.tag_field: config.tag} if config.tag_field is not None else {}
    out |= msgspec.structs.asdict(record)
    return out


class _Cycle(msgspec.Struct, kw_only=True):
    llm_output: list[str] = msgspec.field(default_factory=list)
    supervisor_actions: list[SupervisorAction] = msgspec.field(default_factory=list)
    tool_calls: list[ToolCall] = msgspec.field(default_factory=list)
    errors: list[str] = msgspec.field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.llm_output or self.errors or self.supervisor_actions or self.tool_calls)


class Recorder:
    """Writes the run's records (the log stamps correlation_id, seq and timestamp) and tells a human what happens.

    Progress never breaks a run: a failing ProgressPort is ignored; it is shown only redacted (the log redacts
    its records itself), and with no ProgressPort nothing is built for it. State that belongs to the run (warnings, tool
    calls, supervisor actions) is kept in the RunState it is given.
    """

    def __init__(
        self, logger: LoggerPort, progress: ProgressPort | None, state: RunState, redactor: Redactor = NO_SECRETS
    ) -> None:
        self.logger = logger
        self._progress = progress
        self._redactor = redactor
        self._state = state
        self._cycle = _Cycle()
        self._snapshot: msgspec.Raw | None = None  # the last plan snapshot, and its bytes to compare the next with
        self._snapshot_bytes = b""

    # -- live progress ------------------------------------------------------------------------------------------
    def notify(self, event: ProgressEvent) -> None:
        if self._progress is None:
            return
        try:
            self._progress.update(self._redactor.struct(event, type(event)))  # a terminal is an exit too
        except Exception:  # a progress display must never break a run
            return

    def plan_made(self, plan: Plan) -> None:
        if self._progress is None:
            return
        try:  # a redacted copy, from one encoding: the run goes on changing its plan, the event must not change
            copy = msgspec.json.decode(self._redactor.json(msgspec.json.encode(plan)), type=Plan)
            self._progress.update(PlanMade(plan=copy))
        except Exception:  # as in notify
            return

    def assessment(self, assessment: ConvergenceAssessment) -> None:
        self.notify(Evaluated(assessment=assessment))

    # -- what happened, as records --------------------------------------------------------------------------------
    def log(self, record: LogRecord) -> None:
        """A record of the audit log (aeon.domain.audit_log), as it is."""
        self.logger.emit(record)

    def warn(self, message: str) -> None:
        self._state.warnings.append(message)
        self.logger.emit(WarningRecord(message=message))
        self.notify(Warned(message=message))

    def error(self, message: str) -> None:
        """An error of the cycle in progress (it ends up in the cycle record)."""
        self._cycle.errors.append(message)

    def llm_output(self, text: str) -> None:
        self._cycle.llm_output.append(text)

    def llm_call(self, completion: Completion, entry: CallEntry, label: PassPhase) -> None:
        record = LLMCallRecord(
            purpose=entry.purpose,
            phase=label.value,
            step_id=entry.step_id,
            output=completion.text,
            prompt_tokens=entry.prompt_tokens,
            completion_tokens=entry.completion_tokens,
            cached_tokens=entry.cached_tokens,
            request_id=completion.request_id,
            finish_reason=completion.finish_reason,
            seconds=entry.seconds,
            model=entry.model,
            cost=entry.cost,
        )
        self.logger.emit(record)
        self.llm_output(completion.text)

    def supervisor_action(self, action: SupervisorAction) -> None:
        self._cycle.supervisor_actions.append(action)
        self._state.supervisor_actions.append(action)
        self.logger.emit(SupervisorActionRecord(**fields(action)))
        self.notify(SupervisorActed(action=action))

    def tool_call(self, call: ToolCall) -> None:
        self._cycle.tool_calls.append(call)
        self._state.tool_calls.append(call)
        self.logger.emit(ToolCallRecord(**fields(call)))

    def cycle(self, *, step_number: int, step_id: str | None, plan: Plan | None, label: PassPhase) -> None:
        """Close the cycle in progress into its record."""
        buf, self._cycle = self._cycle, _Cycle()
        record = CycleRecord(
            pass_number=self._state.pass_number,
            step_number=step_number,
            plan_state=self.snapshot(plan),  # as it is now: a log held back (a queued run) must not see later steps
            llm_output=buf.llm_output,
            supervisor_actions=buf.supervisor_actions,
            tool_calls=buf.tool_calls,
            ttl_remaining=self._state.budget.ttl_remaining,
            errors=buf.errors,
            phase=label.value,
            step_id=step_id,
        )
        self.logger.emit(record)

    @property
    def cycle_pending(self) -> bool:
        return not self._cycle.empty

    def advisory(self, advisory: Advisory) -> None:
        self._state.advisories.append(advisory)
        self.logger.emit(AdvisoryRecord(**fields(advisory)))

    def refinement(self, outcomes: Sequence[ActionOutcome], advisories: Sequence[Advisory]) -> None:
        for outcome in outcomes:
            self.logger.emit(RefinementRecord(**fields(outcome)))
        for advisory in advisories:
            self.advisory(advisory)
        applied = sum(o.applied for o in outcomes)
        self.notify(Refined(applied=applied, rejected=len(outcomes) - applied, advisories=tuple(advisories)))

    def run_end(self, result: RunResult, *, expired_cap: str | None) -> None:
        self.logger.emit(
            RunEndRecord(
                status=result.status.value,
                converged=result.converged,
                passes=result.passes,
                error=plain(result.error),
                llm_calls=result.budget.llm_calls,
                counts=plain(result.counts),
                expired_cap=expired_cap,
                ledger=_ledger_summary(result),
            )
        )

    def expired(self, response: TTLExpirationResponse) -> None:
        self.logger.emit(TtlExpiredRecord(**fields(response)))

    def snapshot(self, plan: Plan | None) -> msgspec.Raw | None:
        """The plan as it is now, for records that outlive this moment: its JSON, which the log writes as it is.
        An unchanged plan gives the same Raw object as last time (the plan changes in place, so its encoding is the
        only sign of a change): a log checks a snapshot it has seen once (JsonlEventLog)."""
        if plan is None:
            return None
        encoded = msgspec.json.encode(plan)
        if self._snapshot is None or encoded != self._snapshot_bytes:
            self._snapshot, self._snapshot_bytes = msgspec.Raw(encoded), encoded
        return self._snapshot


def _ledger_summary(result: RunResult) -> dict[str, Any] | None:
    """The run_end record's ledger: totals per run, pass and phase (the calls are the llm_call records)."""
    if result.ledger is None:
        return None
    summary: dict[str, Any] = plain(result.ledger)
    summary.pop("calls", None)
    return summary
