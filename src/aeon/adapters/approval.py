"""Approvers that need no person at a terminal: a Python callback (the one-call API, tests)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Verdict
from aeon.domain.run_state import RunState

Answer = ApprovalDecision | bool
Callback = Callable[[ApprovalRequest], Answer | Awaitable[Answer]]


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
