"""Human approval of tool calls: what a person is asked, what they decide, and the calls they denied."""

from __future__ import annotations

import enum
from typing import Any

import msgspec

from aeon.domain.budget import BudgetState
from aeon.domain.plan import Plan


class Verdict(enum.StrEnum):
    """A person's decision on a tool call: go ahead (maybe with edited arguments), or not."""

    APPROVE = "approve"
    DENY = "deny"


class ApprovalRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A tool call waiting for a person: the step, the tool and its exact arguments (redacted where they leave).

    `key` names this one request within its run (pass and step): a decision is sent for a key, and a decision for
    another key never answers it."""

    run_id: str
    key: str
    step_id: str
    description: str
    tool: str
    args: dict[str, Any]
    pass_number: int
    reason: str | None = None  # why the policy asks (None: the tool or the step asks for approval of every call)
    provenance: tuple[str, ...] = ()  # the outputs the step or its arguments came from (policy requests)


class ApprovalDecision(msgspec.Struct, frozen=True, kw_only=True):
    """What a person decided. `args`, when given with APPROVE, replaces the call's arguments (checked against the
    tool's schema again); `reason` says why a call was denied; `by` names who decided (a user, `terminal`, …)."""

    verdict: Verdict
    by: str
    reason: str | None = None
    args: dict[str, Any] | None = None

    @property
    def approved(self) -> bool:
        return self.verdict is Verdict.APPROVE


class ApprovalRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One request and the decision on it, as the history and the result keep them (`edited`: the call went ahead
    with the decision's arguments, not the request's)."""

    request: ApprovalRequest
    decision: ApprovalDecision
    edited: bool = False


class Pending(msgspec.Struct, frozen=True, kw_only=True):
    """What a run waiting for approval shows while it waits (redacted): the request, the plan and budget so far."""

    request: ApprovalRequest
    plan: Plan | None
    budget: BudgetState
