"""A run's timeline from its JSONL records: passes → phases A–D → what happened in each, placed on the run's clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from aeon.entrypoints.ui import labels

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


def _clock(records: list[dict[str, Any]]) -> tuple[datetime | None, float]:
    stamps = [_when(r) for r in records]
    known = [s for s in stamps if s is not None]
    if not known:
        return None, 0.0
    return min(known), (max(known) - min(known)).total_seconds()


def _when(record: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(record.get("timestamp")))
    except ValueError:
        return None


def build(records: list[dict[str, Any]]) -> Timeline:
    """The timeline of one run's records (in seq order)."""
    origin, total = _clock(records)
    line = Timeline(total=max(total, 1e-6))
    current: Phase | None = None
    subplans: set[str] = set()
    mark = 0.0  # where the next step starts: the end of the previous one, or its phase's start

    def at(record: dict[str, Any]) -> float:
        moment = _when(record)
        return 0.0 if moment is None or origin is None else (moment - origin).total_seconds()

    for record in records:
        event, t = record.get("event"), at(record)
        if event == "phase_entry":
            current = Phase(
                letter=str(record.get("phase")),
                pass_number=int(record.get("pass_number") or 0),
                start=t,
                seq=int(record["seq"]),
            )
            _pass_of(line, current.pass_number).phases.append(current)
            mark = t
            continue
        if event == "phase_exit" and current is not None:
            current.seconds = float(record.get("duration") or max(0.0, t - current.start))
            current.outcome = str(record.get("outcome") or "")
            current = None
            continue
        if event == "refinement":
            subplan = (record.get("action") or {}).get("subplan") or {}
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


def _item(record: dict[str, Any], t: float, mark: float, subplans: set[str]) -> Item | None:
    event, seq = str(record.get("event")), int(record.get("seq", -1))
    maker = _MAKERS.get(event)
    if maker is not None:
        return maker(record, t, seq, mark, subplans)
    if event in ("phase_entry", "phase_exit"):
        return None
    return Item(kind="note", label=event.replace("_", " "), seq=seq, start=t, fields=_rest(record))


def _llm(record: dict[str, Any], t: float, seq: int, *_: Any) -> Item:
    seconds = float(record.get("seconds") or 0.0)
    prompt, cached = int(record.get("prompt_tokens") or 0), int(record.get("cached_tokens") or 0)
    completion = int(record.get("completion_tokens") or 0)
    share = f", {cached / prompt:.0%} cached" if prompt and cached else ""
    cost = record.get("cost")
    price = "cost unknown" if cost is None else ("$0" if cost == 0 else f"${cost:.4f}")
    label = (
        f"LLM {record.get('purpose')} · {record.get('model')} · {prompt} in{share} · {completion} out · "
        f"{price} · {seconds:.2f}s"
    )
    facts = {"purpose": record.get("purpose"), "model": record.get("model"), "prompt": prompt, "cached": cached}
    facts |= {"completion": completion, "cost": cost, "seconds": seconds}
    fields = _kept({"output": record.get("output"), "finish": record.get("finish_reason")})
    return Item(
        kind="llm", label=label, seq=seq, start=max(0.0, t - seconds), seconds=seconds, fields=fields, facts=facts
    )


def _tool(record: dict[str, Any], t: float, seq: int, *_: Any) -> Item:
    error = record.get("error")
    said = f"failed: {error}" if error else "returned"
    by = " (output given by the operator)" if record.get("supplied_by") else ""
    label = f"tool {record.get('tool')} for {record.get('step_id')} {said}{by}"
    fields = {"args": record.get("args"), "output": record.get("output"), "error": error, "notes": record.get("notes")}
    return Item(kind="tool", label=label, seq=seq, start=t, fields=_kept(fields))


def _cycle(record: dict[str, Any], t: float, seq: int, mark: float, subplans: set[str]) -> Item:
    steps = (record.get("plan_state") or {}).get("steps") or []
    sid = record.get("step_id")
    if sid is None:  # the planning cycle: the plan as it stands
        listed = [f"{s.get('step_id')}: {s.get('description')}" for s in steps]
        return Item(kind="plan", label=f"plan of {len(steps)} steps", seq=seq, start=t, fields={"steps": listed})
    step: dict[str, Any] = next((s for s in steps if s.get("step_id") == sid), {})
    mode = step.get("mode") or ("tool" if step.get("tool") else "llm")
    kind = "subplan" if str(sid).split(".")[0] in subplans and "." in str(sid) else str(mode)
    how = f"tool {step.get('tool')}" if step.get("tool") else "LLM"
    label = f"step {sid} · {step.get('status')} · {how} · {step.get('description')}"
    fields = {
        "args": step.get("args") or None,
        "output": step.get("step_output"),
        "errors": step.get("errors") or None,
        "notes": step.get("notes") or None,
    }
    return Item(
        kind="step", label=label, seq=seq, start=mark, seconds=max(0.0, t - mark), step_kind=kind, fields=_kept(fields)
    )


def _refinement(record: dict[str, Any], t: float, seq: int, *_: Any) -> Item:
    action = record.get("action") or {}
    target = action.get("target_step_id") or (action.get("new_step") or {}).get("step_id")
    verdict = "applied" if record.get("applied") else "rejected" + (" (advisory)" if record.get("advisory") else "")
    label = f"refinement {action.get('action_type')} {target or ''}: {verdict} — {action.get('justification')}"
    return Item(kind="refinement", label=label, seq=seq, start=t, fields=_kept({"reason": record.get("reason")}))


def _decision(record: dict[str, Any], t: float, seq: int, *_: Any) -> Item:
    label = f"depth decision: {record.get('decision')} — {record.get('adjustment_reason')}"
    return Item(kind="decision", label=label, seq=seq, start=t)


def _approval(record: dict[str, Any], t: float, seq: int, *_: Any) -> Item:
    if record.get("event") == "approval_requested":
        label = f"approval asked: tool {record.get('tool')} for step {record.get('step_id')}"
        return Item(kind="approval", label=label, seq=seq, start=t, fields={"args": record.get("args")})
    reason = record.get("reason")
    edited = " with edited arguments" if record.get("edited") else ""
    label = f"approval decided: {record.get('verdict')}{edited} by {record.get('by')}" + (
        f": {reason}" if reason else ""
    )
    return Item(
        kind="approval",
        label=label,
        seq=seq,
        start=t,
        fields=_kept({"args": record.get("args"), "args_before": record.get("args_before")}),
    )


def _warning(record: dict[str, Any], t: float, seq: int, *_: Any) -> Item:
    event = str(record.get("event"))
    said = labels.WARNINGS.get(event)
    text = said(record) if said else record.get("message") or record.get("detail") or record.get("reason")
    return Item(kind="warning", label=str(text or event.replace("_", " ")), seq=seq, start=t, fields=_rest(record))


def _skipped(record: dict[str, Any], t: float, seq: int, *_: Any) -> Item:
    label = f"refinement skipped (cap {record.get('cap')}): {record.get('reason')}"
    return Item(kind="refinement", label=label, seq=seq, start=t)


def _ending(record: dict[str, Any], t: float, seq: int, *_: Any) -> Item:
    if record.get("event") == "ttl_expired":
        label = f"stopped by cap {record.get('cap') or 'ttl'}: {record.get('message')}"
        return Item(kind="end", label=label, seq=seq, start=t)
    error = record.get("error") or {}
    said = f" · {error.get('code')}: {error.get('message')}" if isinstance(error, dict) and error else ""
    cap = f" · cap {record.get('expired_cap')}" if record.get("expired_cap") else ""
    return Item(kind="end", label=f"run ended: {record.get('status')}{cap}{said}", seq=seq, start=t)


def _start(record: dict[str, Any], t: float, seq: int, *_: Any) -> Item:
    llm = record.get("llm") or {}
    label = f"run started · model {llm.get('model')} ({llm.get('adapter')}) · TTL {record.get('ttl')}"
    return Item(kind="note", label=label, seq=seq, start=t, fields={"tools": record.get("tools")})


_MAKERS = {
    "run_start": _start,
    "llm_call": _llm,
    "tool_call": _tool,
    "cycle": _cycle,
    "refinement": _refinement,
    "refinement_skipped": _skipped,
    "depth_decision": _decision,
    "approval_requested": _approval,
    "approval_decided": _approval,
    "warning": _warning,
    "phase_error": _warning,
    "llm_call_not_sent": _warning,
    "llm_downgrade": _warning,
    "llm_giveup": _warning,
    "advisory": _warning,
    "prompt_clipped": _warning,
    "ttl_expired": _ending,
    "run_end": _ending,
}


def _kept(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None and v != [] and v != ""}


def _rest(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in ("event", "correlation_id", "seq", "timestamp")}
