"""A run's timeline from its log records (typed, aeon.domain.audit_log): passes → phases A–D → what happened in each."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from aeon.application.views import labels
from aeon.domain.audit_log import ReadRecord, as_plain
from aeon.domain.log_llm import (
    LLMCallNotSentRecord,
    LLMCallRecord,
    LLMDowngradeRecord,
    LLMGiveupRecord,
    PromptClippedRecord,
)
from aeon.domain.log_pass import (
    AdvisoryRecord,
    CycleRecord,
    PhaseEntryRecord,
    PhaseErrorRecord,
    PhaseExitRecord,
    RefinementRecord,
    RefinementSkippedRecord,
    ToolCallRecord,
)
from aeon.domain.log_records import STAMPS, UnknownRecord
from aeon.domain.log_run import (
    ApprovalDecidedRecord,
    ApprovalRequestedRecord,
    DepthDecisionRecord,
    RunEndRecord,
    RunStartRecord,
    TtlExpiredRecord,
    WarningRecord,
)

# Steps of a subplan take their parent's id and a number (s2 → s2.1, s2.2).
_SUBPLAN = "SUBPLAN_CREATE"


@dataclass
class Item:
    """One thing the log recorded: `kind` (llm, tool, step, plan, refinement, decision, approval, warning, end,
    note), a one-line `label`, where it sits on the run's clock (seconds from the first record) and the `seq` of the
    record it came from. `fields` are the record's details shown folded (arguments, output …)."""

    kind: str
    label: str
    seq: int
    start: float
    seconds: float | None = None
    step_kind: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)  # what a table shows of it (an LLM call's tokens, cost …)


@dataclass
class Phase:
    letter: str
    pass_number: int
    start: float
    seq: int
    seconds: float | None = None  # None while the phase is under way
    outcome: str | None = None
    items: list[Item] = field(default_factory=list)


@dataclass
class Pass:
    number: int
    phases: list[Phase] = field(default_factory=list)

    @property
    def start(self) -> float:
        return self.phases[0].start

    @property
    def seconds(self) -> float | None:
        last = self.phases[-1]
        return None if last.seconds is None else last.start + last.seconds - self.start


@dataclass
class Timeline:
    """`outside` holds what no phase encloses (the run's start, its end); `total` the seconds the records span."""

    passes: list[Pass] = field(default_factory=list)
    outside: list[Item] = field(default_factory=list)
    total: float = 0.0
    llm_calls: list[Item] = field(default_factory=list)
    warnings: list[Item] = field(default_factory=list)
    ending: list[Item] = field(default_factory=list)


def _clock(records: Sequence[ReadRecord]) -> tuple[datetime | None, float]:
    stamps = [_when(r) for r in records]
    known = [s for s in stamps if s is not None]
    if not known:
        return None, 0.0
    return min(known), (max(known) - min(known)).total_seconds()


def _when(record: ReadRecord) -> datetime | None:
    try:
        return datetime.fromisoformat(record.timestamp)
    except ValueError:
        return None


def build(records: Sequence[ReadRecord]) -> Timeline:
    """The timeline of one run's records (in seq order)."""
    origin, total = _clock(records)
    line = Timeline(total=max(total, 1e-6))
    current: Phase | None = None
    subplans: set[str] = set()
    mark = 0.0  # where the next step starts: the end of the previous one, or its phase's start

    def at(record: ReadRecord) -> float:
        moment = _when(record)
        return 0.0 if moment is None or origin is None else (moment - origin).total_seconds()

    for record in records:
        t = at(record)
        if isinstance(record, PhaseEntryRecord):
            current = Phase(letter=record.phase, pass_number=record.pass_number, start=t, seq=record.seq)
            _pass_of(line, current.pass_number).phases.append(current)
            mark = t
            continue
        if isinstance(record, PhaseExitRecord):
            if current is not None:
                current.seconds = record.duration or max(0.0, t - current.start)
                current.outcome = record.outcome
                current = None
            continue
        if isinstance(record, RefinementRecord):
            subplan = record.action.get("subplan") or {}
            if subplan.get("parent_step_id"):
                subplans.add(str(subplan["parent_step_id"]))
        item = _item(record, t, mark, subplans)
        if item is None:
            continue
        if item.kind == "step":
            mark = t
        (current.items if current is not None else line.outside).append(item)
        if item.kind == "llm":
            line.llm_calls.append(item)
        elif item.kind == "warning":
            line.warnings.append(item)
        elif item.kind == "end":
            line.ending.append(item)
    return line


def _pass_of(line: Timeline, number: int) -> Pass:
    if not line.passes or line.passes[-1].number != number:
        line.passes.append(Pass(number=number))
    return line.passes[-1]


def _item(record: ReadRecord, t: float, mark: float, subplans: set[str]) -> Item | None:
    maker = _MAKERS.get(type(record))  # by the kind itself: a phase_retry is no phase_error, run_resumed no run_start
    if maker is not None:
        return maker(record, t, record.seq, mark, subplans)
    return Item(kind="note", label=record.event.replace("_", " "), seq=record.seq, start=t, fields=_rest(record))


def _llm(record: LLMCallRecord, t: float, seq: int, *_: Any) -> Item:
    seconds, prompt, cached = record.seconds, record.prompt_tokens, record.cached_tokens
    completion, cost = record.completion_tokens, record.cost
    share = f", {cached / prompt:.0%} cached" if prompt and cached else ""
    price = "cost unknown" if cost is None else ("$0" if cost == 0 else f"${cost:.4f}")
    label = f"LLM {record.purpose} · {record.model} · {prompt} in{share} · {completion} out · {price} · {seconds:.2f}s"
    facts: dict[str, Any] = {"purpose": record.purpose, "model": record.model, "prompt": prompt, "cached": cached}
    facts |= {"completion": completion, "cost": cost, "seconds": seconds}
    fields = _kept({"output": record.output, "finish": record.finish_reason})
    return Item(
        kind="llm", label=label, seq=seq, start=max(0.0, t - seconds), seconds=seconds, fields=fields, facts=facts
    )


def _tool(record: ToolCallRecord, t: float, seq: int, *_: Any) -> Item:
    error = record.error
    said = f"failed: {error}" if error else "returned"
    by = " (output given by the operator)" if record.supplied_by else ""
    label = f"tool {record.tool} for {record.step_id} {said}{by}"
    fields = {"args": record.args, "output": record.output, "error": error, "notes": record.notes}
    return Item(kind="tool", label=label, seq=seq, start=t, fields=_kept(fields))


def _cycle(record: CycleRecord, t: float, seq: int, mark: float, subplans: set[str]) -> Item:
    steps = (record.plan_state or {}).get("steps") or []
    sid = record.step_id
    if sid is None:  # the planning cycle: the plan as it stands
        listed = [f"{s.get('step_id')}: {s.get('description')}" for s in steps]
        return Item(kind="plan", label=f"plan of {len(steps)} steps", seq=seq, start=t, fields={"steps": listed})
    step: dict[str, Any] = next((s for s in steps if s.get("step_id") == sid), {})
    mode = step.get("mode") or ("tool" if step.get("tool") else "llm")
    kind = "subplan" if str(sid).split(".")[0] in subplans and "." in str(sid) else str(mode)
    how = f"tool {step.get('tool')}" if step.get("tool") else "LLM"
    label = f"step {sid} · {step.get('status')} · {how} · {step.get('description')}"
    label += f" · {said}" if (said := labels.untrusted(step.get("origin"))) else ""  # written from untrusted data
    fields = {
        "args": step.get("args") or None,
        "output": step.get("step_output"),
        "errors": step.get("errors") or None,
        "notes": step.get("notes") or None,
    }
    return Item(
        kind="step", label=label, seq=seq, start=mark, seconds=max(0.0, t - mark), step_kind=kind, fields=_kept(fields)
    )


def _refinement(record: RefinementRecord, t: float, seq: int, *_: Any) -> Item:
    action = record.action
    target = action.get("target_step_id") or (action.get("new_step") or {}).get("step_id")
    verdict = "applied" if record.applied else "rejected" + (" (advisory)" if record.advisory else "")
    label = f"refinement {action.get('action_type')} {target or ''}: {verdict} — {action.get('justification')}"
    return Item(kind="refinement", label=label, seq=seq, start=t, fields=_kept({"reason": record.reason}))


def _decision(record: DepthDecisionRecord, t: float, seq: int, *_: Any) -> Item:
    label = f"depth decision: {record.decision} — {record.adjustment_reason}"
    return Item(kind="decision", label=label, seq=seq, start=t)


def _asked(record: ApprovalRequestedRecord, t: float, seq: int, *_: Any) -> Item:
    label = f"approval asked: tool {record.tool} for step {record.step_id}"
    return Item(kind="approval", label=label, seq=seq, start=t, fields={"args": record.args})


def _decided(record: ApprovalDecidedRecord, t: float, seq: int, *_: Any) -> Item:
    reason = record.reason
    edited = " with edited arguments" if record.edited else ""
    label = f"approval decided: {record.verdict}{edited} by {record.by}" + (f": {reason}" if reason else "")
    fields = _kept({"args": record.args, "args_before": record.args_before})
    return Item(kind="approval", label=label, seq=seq, start=t, fields=fields)


def _warning(record: ReadRecord, t: float, seq: int, *_: Any) -> Item:
    return Item(kind="warning", label=labels.warning(record), seq=seq, start=t, fields=_rest(record))


def _skipped(record: RefinementSkippedRecord, t: float, seq: int, *_: Any) -> Item:
    label = f"refinement skipped (cap {record.cap}): {record.reason}"
    return Item(kind="refinement", label=label, seq=seq, start=t)


def _expired(record: TtlExpiredRecord, t: float, seq: int, *_: Any) -> Item:
    return Item(kind="end", label=f"stopped by cap {record.cap or 'ttl'}: {record.message}", seq=seq, start=t)


def _ended(record: RunEndRecord, t: float, seq: int, *_: Any) -> Item:
    error = record.error or {}
    said = f" · {error.get('code')}: {error.get('message')}" if error else ""
    cap = f" · cap {record.expired_cap}" if record.expired_cap else ""
    return Item(kind="end", label=f"run ended: {record.status}{cap}{said}", seq=seq, start=t)


def _start(record: RunStartRecord, t: float, seq: int, *_: Any) -> Item:
    llm = record.llm
    label = f"run started · model {llm.get('model')} ({llm.get('adapter')}) · TTL {record.ttl}"
    return Item(kind="note", label=label, seq=seq, start=t, fields={"tools": record.tools})


_Maker = Callable[[Any, float, int, float, set[str]], Item]
_MAKERS: dict[type[ReadRecord], _Maker] = {
    RunStartRecord: _start,
    LLMCallRecord: _llm,
    ToolCallRecord: _tool,
    CycleRecord: _cycle,
    RefinementRecord: _refinement,
    RefinementSkippedRecord: _skipped,
    DepthDecisionRecord: _decision,
    ApprovalRequestedRecord: _asked,
    ApprovalDecidedRecord: _decided,
    WarningRecord: _warning,
    PhaseErrorRecord: _warning,
    LLMCallNotSentRecord: _warning,
    LLMDowngradeRecord: _warning,
    LLMGiveupRecord: _warning,
    AdvisoryRecord: _warning,
    PromptClippedRecord: _warning,
    TtlExpiredRecord: _expired,
    RunEndRecord: _ended,
}


def _kept(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None and v != [] and v != ""}


def _rest(record: ReadRecord) -> dict[str, Any]:
    if isinstance(record, UnknownRecord):
        return dict(record.fields)
    return {k: v for k, v in as_plain(record).items() if k not in STAMPS}
