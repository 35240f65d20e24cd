"""Approve and deny from a page (`aeon ui`): the run use case's answer, as `aeon approve` / `aeon deny`
(RecordedRuns.answer, which checks edited arguments against the tool's schema and sends nothing when they do not
fit); then the run goes on in this process, in the background, unless a live process holds it."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from aeon.application.approval_args import edited_args
from aeon.application.runs.recorded import OnRecord, RecordedRuns, approval, denial
from aeon.domain.approval import ApprovalDecision

EDITED = "the edited arguments"


class GoesOn(OnRecord[Any], Protocol):
    """What the decisions ask of a DurableRuns port with a record (DbosRuns): the use case's, and to go on."""

    def carry_on(self, run_id: str) -> Any: ...


@dataclass
class Decisions:
    """Decides on the runs of `runs`; `going_on` holds the runs this process finishes after a decision."""

    runs: GoesOn
    going_on: dict[str, threading.Thread] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    sent: dict[str, str] = field(default_factory=dict)  # run id -> the request key decided here last

    def approve(self, run_id: str, *, by: str, args_text: str | None) -> None:
        """Approve the call run `run_id` waits on, with the arguments as asked, or edited (`args_text`, JSON)."""
        args = edited_args(args_text, EDITED) if args_text is not None and args_text.strip() else None
        self._decide(run_id, approval(by, args))

    def deny(self, run_id: str, *, by: str, reason: str) -> None:
        self._decide(run_id, denial(by, reason))

    def check(self, run_id: str, args_text: str) -> list[str]:
        """What is wrong with edited arguments for the call run `run_id` waits on (empty: they fit); the check that
        approving them makes again."""
        return RecordedRuns(self.runs).check(run_id, args_text, EDITED)

    def _decide(self, run_id: str, decision: ApprovalDecision) -> None:
        key = self.runs.pending(run_id).request.key
        RecordedRuns(self.runs).answer(run_id, decision, go_on=False, edited=EDITED)
        self.sent[run_id] = key
        thread = threading.Thread(target=self._carry_on, args=(run_id,), name=f"aeon-ui-{run_id}", daemon=True)
        self.going_on[run_id] = thread
        thread.start()

    def _carry_on(self, run_id: str) -> None:
        try:
            self.runs.carry_on(run_id)
        except Exception as exc:  # shown on the run's page; the run stays on the record for aeon resume
            self.failures[run_id] = f"{type(exc).__name__}: {exc}"

    def executing(self) -> list[str]:
        """The runs this process took on after a decision and has not finished (they wait again, or run)."""
        return [run_id for run_id, thread in self.going_on.items() if thread.is_alive()]

    def state(self, run_id: str) -> dict[str, Any]:
        return {
            "going_on": run_id in self.executing(),
            "failure": self.failures.get(run_id),
            "sent": self.sent.get(run_id),
        }
