"""Approvers: a Python callback (the one-call API, tests), and the person at the terminal (`aeon run`), shown the
step, the tool and its exact arguments (redacted) and asked."""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from aeon.adapters.tools.threads import run_on_daemon_thread
from aeon.application.approval_args import edited_args
from aeon.application.errors import InputError
from aeon.application.ports import ToolPort
from aeon.application.redaction import Redactor
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Verdict
from aeon.domain.plan import Plan
from aeon.domain.run_state import RunState
from aeon.domain.text import terminal_safe

Answer = ApprovalDecision | bool
Callback = Callable[[ApprovalRequest], Answer | Awaitable[Answer]]
MAX_ANSWER = 64 * 1024  # characters of edited arguments read from the terminal
ASK = "approve [a] · edit the arguments [e] · deny [d]: "
# why edited arguments do not fit (None: they fit): the tools, the tool, the step, the arguments, the run's plan
EditCheck = Callable[[ToolPort, str, str, dict[str, Any], Plan | None], str | None]


class CallbackApprover:
    """An ApproverPort that asks a Python function: it returns an ApprovalDecision, or True (approve as asked) /
    False (deny); it may be a coroutine function, which may take as long as the approval timeout allows."""

    def __init__(self, callback: Callback, *, by: str = "callback") -> None:
        self._callback, self._by = callback, by

    async def decide(
        self, request: ApprovalRequest, snapshot: RunState, *, wait_seconds: float
    ) -> ApprovalDecision | None:
        answer = self._callback(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, ApprovalDecision):
            return answer
        if answer is True:
            return ApprovalDecision(verdict=Verdict.APPROVE, by=self._by)
        return ApprovalDecision(verdict=Verdict.DENY, by=self._by, reason="the callback said no")


class TerminalApprover:
    """An ApproverPort that asks the person at the terminal (`read` a line, `out` the display). The arguments shown
    are redacted; approving as shown runs the call with its real arguments. Edited arguments are checked (`check`:
    the tool's schema, a `$from` reference against the run's plan) before they are accepted; end of input denies."""

    def __init__(
        self,
        tools: ToolPort,
        redactor: Redactor,
        *,
        check: EditCheck,
        read: Callable[[], str],
        out: TextIO,
        by: str = "terminal",
    ) -> None:
        self._tools, self._redactor, self._check, self._read, self._out, self._by = (
            tools,
            redactor,
            check,
            read,
            out,
            by,
        )

    async def decide(
        self, request: ApprovalRequest, snapshot: RunState, *, wait_seconds: float
    ) -> ApprovalDecision | None:
        try:
            async with asyncio.timeout(wait_seconds):
                decision: ApprovalDecision = await run_on_daemon_thread(self._ask, request=request, plan=snapshot.plan)
                return decision
        except TimeoutError:
            self._say("\nno answer in time: the call is not made")
            return None

    def _say(self, text: str) -> None:
        self._out.write(terminal_safe(self._redactor.text(text)) + "\n")
        self._out.flush()

    def _ask(self, request: ApprovalRequest, plan: Plan | None = None) -> ApprovalDecision:
        shown = json.dumps(request.args, ensure_ascii=False, indent=2)
        self._say(f"\n✋ approval needed · step {request.step_id}: {request.description}")
        self._say(f"   tool {request.tool} with arguments:\n{shown}")
        if request.reason:  # the capability policy asks: say why, and which outputs the call came from
            came = f" (from {', '.join(request.provenance)})" if request.provenance else ""
            self._say(f"   asked because {request.reason}{came}")
        while True:
            answer = self._line(ASK).strip().lower()
            if answer in ("a", "approve", "y", "yes"):
                return ApprovalDecision(verdict=Verdict.APPROVE, by=self._by)
            if answer in ("d", "deny", "n", "no"):
                reason = self._line("reason: ").strip() or "denied at the terminal"
                return ApprovalDecision(verdict=Verdict.DENY, by=self._by, reason=reason)
            if answer in ("e", "edit"):
                if (args := self._edited(request, plan)) is not None:
                    return ApprovalDecision(verdict=Verdict.APPROVE, by=self._by, args=args)
                continue
            if answer == "\x04":  # end of input
                return ApprovalDecision(verdict=Verdict.DENY, by=self._by, reason="no answer (end of input)")
            self._say("please answer a, e or d")

    def _line(self, prompt: str) -> str:
        self._out.write(prompt)
        self._out.flush()
        try:
            return self._read()[:MAX_ANSWER]
        except EOFError:
            return "\x04"

    def _edited(self, request: ApprovalRequest, plan: Plan | None) -> dict[str, Any] | None:
        """The arguments typed as one JSON object, when they fit the tool's schema (a `$from` reference checked
        against `plan`); else None (said why)."""
        tool = request.tool
        try:
            args = edited_args(self._line("arguments as one JSON object: "), "the arguments") or {}
        except InputError as exc:
            self._say(f"{exc}: try again")
            return None
        if (problem := self._check(self._tools, tool, request.step_id, args, plan)) is not None:
            self._say(f"the arguments do not fit tool {tool}: {problem}: try again")
            return None
        return args


def terminal_approver(tools: ToolPort, redactor: Redactor, check: EditCheck) -> TerminalApprover:
    return TerminalApprover(tools, redactor, check=check, read=_read_line, out=sys.stderr)


def _read_line() -> str:
    line = sys.stdin.readline(MAX_ANSWER)
    if not line:
        raise EOFError
    return line
