"""The run use case for runs on the record (RecordedRuns): resume an interrupted run, fork one from a pass, answer
the call a run waits on — each one call on a DurableRuns port, after the rules every door shares."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from aeon.application.approval_args import edited_args, user_name
from aeon.application.errors import InputError
from aeon.application.plans.edits import edited_problem
from aeon.application.ports import ProgressPort, ToolPort
from aeon.domain.approval import ApprovalDecision, Pending, Verdict

Done = TypeVar("Done")
Done_co = TypeVar("Done_co", covariant=True)


class OnRecord(Protocol[Done_co]):
    """What the use case asks of a DurableRuns port with a record (DbosRuns)."""

    def resume(
        self, run_id: str, *, rerun_unsafe: bool = False, given: Any = None, progress: Any = None
    ) -> Done_co: ...

    def fork(
        self, run_id: str, from_pass: int, *, config: str | None = None, progress: Any = None, new_id: str | None = None
    ) -> Done_co: ...

    def answer(self, run_id: str, decision: ApprovalDecision, *, go_on: bool) -> Done_co | None: ...

    def pending(self, run_id: str) -> Pending: ...

    def tools(self, run_id: str) -> ToolPort: ...


def approval(by: str | None, args: dict[str, Any] | None = None) -> ApprovalDecision:
    """A person's approval, as asked or with edited `args`; `by` (blank: this process's user) for the record."""
    return ApprovalDecision(verdict=Verdict.APPROVE, by=(by or "").strip() or user_name(), args=args)


def denial(by: str | None, reason: str, *, hint: str = "") -> ApprovalDecision:
    """A person's denial: it needs a reason (InputError), which the run and its evaluation see."""
    if not reason.strip():
        raise InputError(f"a denial needs a reason{hint}: the run and its evaluation see it")
    return ApprovalDecision(verdict=Verdict.DENY, by=(by or "").strip() or user_name(), reason=reason.strip())


def decision_of(body: dict[str, Any]) -> ApprovalDecision:
    """A decision sent as JSON: {"verdict": "approve", "args"?: {...}} or {"verdict": "deny", "reason": "..."},
    `by` who decides; InputError naming what does not fit."""
    verdict, by, args, reason = (body.get(k) for k in ("verdict", "by", "args", "reason"))
    by = by if isinstance(by, str) else None
    if verdict == "approve":
        if args is not None and not isinstance(args, dict):
            raise InputError("'args' must be a JSON object: the call's arguments, edited")
        return approval(by, args)
    if verdict == "deny":
        return denial(by, reason if isinstance(reason, str) else "", hint=" ('reason')")
    raise InputError('\'verdict\' must be "approve" or "deny"')


@dataclass(frozen=True)
class RecordedRuns(Generic[Done]):
    """`resume`, `fork` and `answer` on `port`, a fork's id by `new_id`: `aeon resume/replay/approve/deny`, `aeon
    mcp`'s resume and `aeon ui`'s decisions call these."""

    port: OnRecord[Done]
    new_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))

    def resume(
        self, run_id: str, *, rerun_unsafe: bool = False, given: Any = None, progress: ProgressPort | None = None
    ) -> Done:
        """Go on with interrupted run `run_id`; `given`: the output of a cut-off tool call that had its effect."""
        return self.port.resume(run_id, rerun_unsafe=rerun_unsafe, given=given, progress=progress)

    def fork(
        self, run_id: str, from_pass: int, *, config: str | None = None, progress: ProgressPort | None = None
    ) -> Done:
        """A new run from run `run_id`'s record up to pass `from_pass`, `config` (default: the run's) from there."""
        if from_pass < 1:
            raise InputError(f"--from-pass must be 1 or more, got {from_pass}")
        return self.port.fork(run_id, from_pass, config=config, progress=progress, new_id=self.new_id())

    def answer(self, run_id: str, decision: ApprovalDecision, *, go_on: bool, edited: str = "--args") -> Done | None:
        """Send `decision` on the call run `run_id` waits on; with `go_on`, finish the run here and return its
        outcome (None otherwise). Arguments shown unchanged approve the call as asked; edited ones are checked
        against the tool's schema first: InputError naming them as `edited`, and nothing sent, when they do not
        fit (the check every call gets)."""
        pending = self.port.pending(run_id)
        if decision.args is not None and decision.args == pending.request.args:
            decision = msgspec.structs.replace(decision, args=None)  # shown unchanged: approved as asked
        if decision.args is not None and (problem := self.problem(run_id, decision.args, pending)) is not None:
            raise InputError(f"{edited} do not fit tool {pending.request.tool!r}: {problem} (nothing was sent)")
        return self.port.answer(run_id, decision, go_on=go_on)

    def check(self, run_id: str, text: str, what: str = "--args") -> list[str]:
        """What is wrong with edited arguments given as JSON `text` (named `what`) for the call run `run_id` waits
        on (empty: they fit): the check that answering with them makes again."""
        try:
            args = edited_args(text, what) or {}
        except InputError as exc:
            return [str(exc)]
        problem = self.problem(run_id, args)
        return [problem] if problem else []

    def problem(self, run_id: str, args: dict[str, Any], pending: Pending | None = None) -> str | None:
        """What is wrong with edited `args` for the call run `run_id` waits on (None: they fit); a `$from` reference
        is checked as `aeon validate` checks one, against the run's plan as it waits."""
        pending = pending or self.port.pending(run_id)
        request = pending.request
        return edited_problem(self.port.tools(run_id), request.tool, request.step_id, args, pending.plan)
