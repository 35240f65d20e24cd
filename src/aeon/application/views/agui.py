"""A run's events in the AG-UI protocol (what CopilotKit and other AG-UI front ends render): each event as the dicts
of the protocol's events, with its field names (camelCase). Pure: the door validates and encodes them.

    RUN_STARTED                      first, once
    STATE_SNAPSHOT {plan}            a plan made or revised, whole; STATE_DELTA (JSON Patch) as each step ends
    STEP_STARTED / STEP_FINISHED     each plan step, named by its id
    TOOL_CALL_START/ARGS/END         a tool step's call as it starts (the tool and its arguments as planned)
    TOOL_CALL_RESULT                 its output, or its errors, as it ends
    CUSTOM aeon.approval_requested   a call waits for a person (the request), aeon.warning, aeon.<Event> otherwise
    TEXT_MESSAGE_START/CONTENT/END   the run's answer, as the assistant's message
    RUN_FINISHED                     completed (outcome success), awaiting approval (interrupt), interrupted (cancelled)
    RUN_ERROR                        any other ending: its error code and message
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from aeon.application.results import RunEnded, RunResult, RunStatus
from aeon.domain.approval import ApprovalRequest
from aeon.domain.progress import (
    ApprovalRequested,
    PlanMade,
    ProgressEvent,
    StepEnded,
    StepRepaired,
    StepStarted,
    Warned,
)

Event = dict[str, Any]
RESUME_SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
}
FINISHED = {RunStatus.COMPLETED: "success", RunStatus.UNVERIFIED: "success", RunStatus.INTERRUPTED: "cancelled"}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(msgspec.to_builtins(value), ensure_ascii=False)


class AguiEvents:
    """One run's AG-UI events: `started()` first, then `of(event)` for each of its events, in order (RunEnded last).
    Ids are made from `run_id` (a step's nth call: RUN-s1-1), so the same run always maps to the same stream."""

    def __init__(self, run_id: str, thread_id: str) -> None:
        self.run_id, self.thread_id = run_id, thread_id
        self._steps: dict[str, dict[str, Any]] = {}  # the plan's steps by id, as the state snapshot shows them
        self._order: list[str] = []
        self._calls: dict[str, int] = {}  # how many calls each step made (a step may run again in a later pass)

    def started(self) -> list[Event]:
        return [{"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id}]

    def of(self, event: ProgressEvent | RunEnded) -> list[Event]:
        match event:
            case RunEnded(result=result):
                return [*self._answer(result), self._ended(result)]
            case PlanMade(plan=plan):
                self._order = [s.step_id for s in plan.steps]
                self._steps = {
                    s.step_id: {"id": s.step_id, "description": s.description, "tool": s.tool, "args": s.args,
                                "status": str(s.status)}
                    for s in plan.steps
                }  # fmt: skip
                snapshot = {"goal": plan.goal, "steps": [self._steps[i] for i in self._order]}
                return [{"type": "STATE_SNAPSHOT", "snapshot": msgspec.to_builtins({"plan": snapshot})}]
            case StepStarted(step_id=step):
                return [{"type": "STEP_STARTED", "stepName": step}, *self._call(step)]
            case StepEnded():
                return self._step_ended(event)
            case StepRepaired(step_id=step):
                self._steps.setdefault(step, {"id": step}).update(tool=event.tool, args=msgspec.to_builtins(event.args))
                return [self._custom(event)]
            case ApprovalRequested(request=request):
                return [{"type": "CUSTOM", "name": "aeon.approval_requested", "value": msgspec.to_builtins(request)}]
            case Warned(message=message):
                return [{"type": "CUSTOM", "name": "aeon.warning", "value": message}]
            case _:
                return [self._custom(event)]

    def interrupted(self, request: ApprovalRequest) -> Event:
        """RUN_FINISHED with an interrupt: a call waits for a person, and a RunAgentInput whose `resume` names
        `interrupt_id(request)` answers it (`payload`: {"approved": true} or {"approved": false, "reason": "…"})."""
        interrupt = _interrupt(self.run_id, request.key, request.step_id, request.tool, request.reason)
        interrupt["responseSchema"] = RESUME_SCHEMA
        if request.step_id in self._calls:
            interrupt["toolCallId"] = self._call_id(request.step_id)
        said = {"status": str(RunStatus.AWAITING_APPROVAL), "answer": None}
        return ending(self.run_id, self.thread_id, RunStatus.AWAITING_APPROVAL, said, error=None, interrupt=interrupt)

    def interrupt_id(self, request: ApprovalRequest) -> str:
        return f"{self.run_id}-{request.key}"

    def _call_id(self, step: str) -> str:
        return f"{self.run_id}-{step}-{self._calls.get(step, 0)}"

    def _call(self, step: str) -> list[Event]:
        planned = self._steps.get(step, {})
        if not planned.get("tool"):
            return []
        self._calls[step] = self._calls.get(step, 0) + 1
        call = self._call_id(step)
        return [
            {"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": planned["tool"]},
            {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": _text(planned.get("args") or {})},
            {"type": "TOOL_CALL_END", "toolCallId": call},
        ]

    def _step_ended(self, event: StepEnded) -> list[Event]:
        out: list[Event] = []
        if self._steps.get(event.step_id, {}).get("tool") and event.step_id in self._calls:
            content = _text(event.output) if not event.errors else "error: " + "; ".join(event.errors)
            call = self._call_id(event.step_id)
            out.append(
                {"type": "TOOL_CALL_RESULT", "messageId": f"{call}-result", "toolCallId": call, "content": content,
                 "role": "tool"}
            )  # fmt: skip
        if event.step_id in self._order:
            at = f"/plan/steps/{self._order.index(event.step_id)}"
            patch = [{"op": "replace", "path": f"{at}/status", "value": str(event.status)}]
            patch.append({"op": "add", "path": f"{at}/output", "value": msgspec.to_builtins(event.output)})
            self._steps[event.step_id]["status"] = str(event.status)
            out.append({"type": "STATE_DELTA", "delta": patch})
        out.append({"type": "STEP_FINISHED", "stepName": event.step_id})
        return out

    def _answer(self, result: RunResult) -> list[Event]:
        if result.answer is None:
            return []
        message = f"{self.run_id}-answer"
        return [
            {"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": _text(result.answer) or " "},
            {"type": "TEXT_MESSAGE_END", "messageId": message},
        ]

    def _ended(self, result: RunResult) -> Event:
        said = {"status": str(result.status), "answer": msgspec.to_builtins(result.answer)}
        interrupt = None
        if result.status is RunStatus.AWAITING_APPROVAL and result.pending_approval is not None:
            request = result.pending_approval
            interrupt = _interrupt(self.run_id, request.key, request.step_id, request.tool, request.reason)
            if request.step_id in self._calls:
                interrupt["toolCallId"] = self._call_id(request.step_id)
        error = (result.error.code, result.error.message) if result.error is not None else None
        return ending(self.run_id, self.thread_id, str(result.status), said, error=error, interrupt=interrupt)

    @staticmethod
    def _custom(event: ProgressEvent) -> Event:
        value = msgspec.to_builtins(event)
        return {"type": "CUSTOM", "name": f"aeon.{value.pop('type')}", "value": value}


def _interrupt(run_id: str, key: str, step_id: str, tool: str, reason: str | None) -> dict[str, Any]:
    why = reason or f"step {step_id} calls {tool}: a person approves each call"
    return {"id": f"{run_id}-{key}", "reason": "approval", "message": why}


def ending(
    run_id: str,
    thread_id: str,
    status: str,
    said: dict[str, Any],
    *,
    error: tuple[str, str] | None,
    interrupt: dict[str, Any] | None,
) -> Event:
    """The last event of a run that ended with `status`: RUN_FINISHED (success, interrupt, cancelled) or RUN_ERROR
    with `error` (code, message), or the status when it has none."""
    ids = {"threadId": thread_id, "runId": run_id}
    if status == RunStatus.AWAITING_APPROVAL and interrupt is not None:
        return {
            "type": "RUN_FINISHED",
            **ids,
            "result": said,
            "outcome": {"type": "interrupt", "interrupts": [interrupt]},
        }
    if status in FINISHED:
        return {"type": "RUN_FINISHED", **ids, "result": said, "outcome": {"type": FINISHED[RunStatus(status)]}}
    code, message = error if error is not None else (f"AEON.RUN.{status.upper()}", f"the run ended {status}")
    return {"type": "RUN_ERROR", "message": message, "code": code}


class AguiRecords:
    """A recorded run's audit records (plain, as GET /runs/{id}/events reads them) as AG-UI events: `of(record)` for
    each, in seq order. The records say less than the live events: a tool call is one record, written once it
    returned (start, arguments, end and result at once, inside its step), and the run's end has no answer."""

    def __init__(self, run_id: str, thread_id: str) -> None:
        self.run_id, self.thread_id = run_id, thread_id
        self._waiting: dict[str, Any] | None = None

    def of(self, record: dict[str, Any]) -> list[Event]:
        kind = str(record.get("event", ""))
        if kind == "run_start":
            return [{"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id}]
        if kind == "tool_call":
            step, call = str(record["step_id"]), f"{self.run_id}-{record['step_id']}-{record.get('seq', 0)}"
            failed = record.get("error")
            return [
                {"type": "STEP_STARTED", "stepName": step},
                {"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": str(record["tool"])},
                {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": _text(record.get("args") or {})},
                {"type": "TOOL_CALL_END", "toolCallId": call},
                {"type": "TOOL_CALL_RESULT", "messageId": f"{call}-result", "toolCallId": call, "role": "tool",
                 "content": f"error: {failed}" if failed else _text(record.get("output"))},
                {"type": "STEP_FINISHED", "stepName": step},
            ]  # fmt: skip
        if kind in ("approval_requested", "approval_decided"):
            self._waiting = record if kind == "approval_requested" else None
        if kind == "run_end":
            return [self._ended(record)]
        value = {k: v for k, v in record.items() if k != "event"}
        return [{"type": "CUSTOM", "name": f"aeon.{kind}", "value": value}]

    def _ended(self, record: dict[str, Any]) -> Event:
        status, error, waiting = str(record.get("status")), record.get("error"), self._waiting
        interrupt = None
        if waiting is not None:
            interrupt = _interrupt(
                self.run_id, waiting["key"], waiting["step_id"], waiting["tool"], waiting.get("reason")
            )
        said = {"status": status, "answer": None}
        told = (str(error.get("code")), str(error.get("message"))) if isinstance(error, dict) else None
        return ending(self.run_id, self.thread_id, status, said, error=told, interrupt=interrupt)
