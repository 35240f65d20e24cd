"""The log checks a plan snapshot once: records that repeat an unchanged plan are checked for their own fields only,
a changed plan (refined, repaired, a step done) is checked again, and every line stays byte for byte what a check of
the whole record writes, secrets redacted and large texts written once."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import msgspec

from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.application.recorder import Recorder
from aeon.application.redaction import REDACTED, Redactor
from aeon.domain.budget import BudgetLimits, BudgetState
from aeon.domain.log_pass import CycleRecord, PhaseEntryRecord, PhaseExitRecord
from aeon.domain.log_records import LogRecord
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.run_state import RunState
from aeon.testing import ListLog

GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5" * 4


class SpyRedactor(Redactor):
    """Keeps every encoding its scan is asked about."""

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        super().__init__(secrets)
        self.asked: list[bytes] = []

    def may_hold(self, encoded: bytes) -> bool:
        self.asked.append(bytes(encoded))
        return super().may_hold(encoded)

    def times_scanned(self, plan: Plan) -> int:
        encoded = msgspec.json.encode(plan)
        return sum(encoded in asked for asked in self.asked)


def _recorder() -> Recorder:
    state = RunState(
        correlation_id="c",
        request="r",
        started_at="2026-01-01T00:00:00+00:00",
        budget=BudgetState(limits=BudgetLimits(ttl=1, max_llm_calls=1), ttl_remaining=1),
    )
    return Recorder(ListLog(), None, state)


def _plan(steps: int = 6) -> Plan:
    return Plan(
        goal="benchmark",
        steps=[PlanStep(step_id=f"s{i}", description="add", tool="calculator", args={"x": i}) for i in range(steps)],
    )


def _phase_records(recorder: Recorder, plan: Plan, phase: str) -> list[LogRecord]:
    """A phase boundary as the phase runner writes it: the entry, then the exit with the state before and after."""
    before = {"plan_state": recorder.snapshot(plan), "ttl_remaining": 1, "phase_state": {"context": phase}}
    after = {"plan_state": recorder.snapshot(plan), "ttl_remaining": 1, "phase_state": {"context": phase}}
    common = {"phase": phase, "pass_number": 1, "transition": f"{phase}->next"}
    ttl = {"ttl_before": 1, "ttl_at_boundary": 1}
    return [
        PhaseEntryRecord(**common, state_before=before, ttl_snapshot=ttl),
        PhaseExitRecord(
            **common, duration=0.1, outcome="success", state_before=before, state_after=after, **{"ttl_snapshot": ttl}
        ),
    ]


def _cycle(recorder: Recorder, plan: Plan, step: int, errors: list[str] | None = None) -> CycleRecord:
    return CycleRecord(
        pass_number=1,
        step_number=step,
        plan_state=recorder.snapshot(plan),
        llm_output=[],
        supervisor_actions=[],
        tool_calls=[],
        ttl_remaining=1,
        errors=errors or [],
    )


def _log(redactor: Redactor) -> tuple[JsonlEventLog, io.StringIO]:
    stream = io.StringIO()
    log = JsonlEventLog(None, stream=stream, redactor=redactor, clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    log.bind("00000000-0000-4000-8000-000000000000")
    return log, stream


def _unshared(record: LogRecord) -> LogRecord:
    """The same record with each snapshot a Raw of its own: what a log that checks every record whole is given."""
    fresh = msgspec.json.decode(msgspec.json.encode(record))
    changes = {}
    for name in ("plan_state", "state_before", "state_after"):
        value = fresh.get(name)
        if isinstance(value, dict) and "goal" in value:
            changes[name] = msgspec.Raw(msgspec.json.encode(value))
        elif isinstance(value, dict) and isinstance(value.get("plan_state"), dict):
            changes[name] = {**value, "plan_state": msgspec.Raw(msgspec.json.encode(value["plan_state"]))}
    return msgspec.structs.replace(record, **changes)


def test_an_unchanged_plan_is_the_same_snapshot_and_a_changed_one_a_new_one() -> None:
    recorder, plan = _recorder(), _plan()
    first = recorder.snapshot(plan)
    assert recorder.snapshot(plan) is first
    plan.steps[2].status = StepStatus.RUNNING
    changed = recorder.snapshot(plan)
    assert changed is not first and bytes(changed) == msgspec.json.encode(plan)
    assert recorder.snapshot(None) is None


def test_an_unchanged_plan_is_scanned_once_however_many_records_carry_it_and_again_once_changed() -> None:
    redactor = SpyRedactor()
    log, _ = _log(redactor)
    recorder, plan = _recorder(), _plan()
    for record in [*_phase_records(recorder, plan, "A"), *_phase_records(recorder, plan, "B")]:
        log.emit(record)  # four records, six snapshots of one plan
    assert redactor.times_scanned(plan) == 1
    plan.steps.append(PlanStep(step_id="s9", description="refined in", agent="llm"))  # a refinement adds a step
    plan.reindex()
    for record in [_cycle(recorder, plan, 1), *_phase_records(recorder, plan, "C")]:
        log.emit(record)
    assert redactor.times_scanned(plan) == 1


def test_the_lines_are_byte_for_byte_those_of_a_log_that_checks_every_record_whole() -> None:
    secret = "configured-secret-value"
    recorder, plan = _recorder(), _plan()
    records: list[LogRecord] = [*_phase_records(recorder, plan, "A"), _cycle(recorder, plan, 1)]
    records.append(_cycle(recorder, plan, 2, errors=[f"the tool said {GITHUB_TOKEN} and {secret}"]))
    plan.steps[1].step_output = "x" * 3000  # a large text: written once, then as a repeat marker
    records += [_cycle(recorder, plan, 3), *_phase_records(recorder, plan, "C")]
    plan.steps[4].notes = [f"the key is {secret}"]  # a secret inside the plan
    records += [_cycle(recorder, plan, 4), *_phase_records(recorder, plan, "D")]
    shared, shared_out = _log(Redactor([secret]))
    whole, whole_out = _log(Redactor([secret]))
    for record in records:
        shared.emit(record)
        whole.emit(_unshared(record))
    lines = shared_out.getvalue().splitlines()
    assert lines == whole_out.getvalue().splitlines()
    assert len(lines) == len(records)
    assert all(secret not in line and GITHUB_TOKEN not in line for line in lines)
    assert json.loads(lines[3])["errors"] == [f"the tool said {REDACTED} and {REDACTED}"]
    assert "[aeon:repeat seq=" in lines[5]
    assert json.loads(lines[-1])["state_after"]["plan_state"]["steps"][4]["notes"] == [f"the key is {REDACTED}"]


def test_a_secret_in_a_record_whose_snapshot_was_checked_is_still_redacted() -> None:
    log, stream = _log(Redactor())
    recorder, plan = _recorder(), _plan()
    log.emit(_cycle(recorder, plan, 1))
    log.emit(_cycle(recorder, plan, 2, errors=[f"Authorization: Bearer {GITHUB_TOKEN}"]))
    second = json.loads(stream.getvalue().splitlines()[1])
    assert GITHUB_TOKEN not in json.dumps(second) and REDACTED in second["errors"][0]
    assert second["plan_state"] == json.loads(msgspec.json.encode(plan))
