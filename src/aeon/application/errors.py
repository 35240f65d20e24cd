"""Errors raised through ports and by the use cases. Adapters let only these escape.

AeonError (domain.errors)
└── ApplicationError
    ├── LLMError                      provider trouble, raised by LLM adapters
    │   ├── LLMTransient              one failed attempt that may be retried (timeouts, resets, 408/409/429/5xx/529)
    │   ├── LLMUnavailable            transient failures outlasted every attempt
    │   │   └── LLMTooSlow            …and each was an answer that did not come within llm.read_timeout: slow, not down
    │   ├── LLMRejected               a non-retryable refusal of the request (400/401/403/404/413/422 …)
    │   ├── LLMBadResponse            a 2xx whose body is undecodable, has no choices, or an answer we never asked for
    │   │   └── LLMEmptyAnswer        the model answered with no text at all
    │   ├── LLMTruncated              the answer hit the token limit; never sent to JSON repair
    │   │   └── LLMContextExceeded    the model's context window filled up before the answer ended
    │   ├── LLMRefused                the model refused to answer
    │   │   └── LLMContentFiltered    the provider's content filter stopped the answer
    │   └── ScriptExhausted           a ScriptedLLM ran out of responses
    ├── ToolError
    │   ├── ToolNotFound
    │   └── ToolRegistrationError     a tool whose schema or signature cannot be registered
    ├── MemoryStoreError              the memory port failed (a builtin MemoryError is the interpreter out of RAM)
    │   ├── MemoryKeyNotFound         read of a key that was never written
    │   └── MemoryUnavailable         the store failed
    ├── UnrecoverableOutput           the supervisor gave up after its repair attempts
    ├── BudgetExhausted               TTL or a resource cap ran out (control flow; becomes TTLExpirationResponse)
    ├── ContextViolation              an LLM call's context breaks the propagation table
    ├── EventLogUnavailable           the event log cannot be opened or its first record written (nothing spent yet)
    ├── SystemDatabaseUnavailable     the durable runs' system database cannot be opened or set up (nothing spent yet)
    ├── ApprovalExpired               no decision on a tool call came within run.approval_timeout
    ├── PolicyRefused (policy.py)     a call the policy needs consent for, with nobody to ask: not retried
    ├── InputError                    a user-supplied plan, script or request that cannot be used
    │   └── AlreadyDecided            a decision on a tool call that was decided before (by whom, when): nothing sent
    ├── ConfigurationError            a config file missing, unreadable or off the schema (the message names the key
    │                                 or path), or settings that cannot work together (a dialect of the other wire)
    ├── UsageError                    the Python API called where or how it cannot work (aeon.run inside a running
    │                                 event loop, an unknown keyword, a model that is neither a name nor a model)
    └── InternalError                 a bug (an exception that is no AeonError), as the run's record names it
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from aeon.domain.budget import Cap, CapHit, ExpirationType
from aeon.domain.errors import AeonError
from aeon.domain.llm import Usage


class ApplicationError(AeonError):
    code = "AEON.APPLICATION"


class LLMError(ApplicationError):
    code = "AEON.LLM"

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class LLMTransient(LLMError):
    """`slow`: the attempt was sent and the answer did not come in time (a read timeout), rather than the provider
    failing to take it."""

    code = "AEON.LLM.TRANSIENT"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
        retry_after: float | None = None,
        slow: bool = False,
    ) -> None:
        super().__init__(message, status=status, attempts=attempts)
        self.retry_after = retry_after
        self.slow = slow


class LLMUnavailable(LLMError):
    code = "AEON.LLM.UNAVAILABLE"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
        cause: str = "",
        waits: tuple[float, ...] = (),
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status=status, attempts=attempts)
        self.cause = cause or message  # what the last attempt met ("HTTP 503", "read timeout" …)
        self.waits = waits  # the backoff waits between the attempts, in seconds
        self.retry_after = retry_after  # the wait the provider last asked for, if it did


class LLMTooSlow(LLMUnavailable):
    """Every attempt was sent and none was answered within llm.read_timeout: the model is slow, not unreachable
    (a small local model on a busy machine). Another round after a pause would be as slow: none is made."""

    code = "AEON.LLM.TOO_SLOW"


class LLMRejected(LLMError):
    code = "AEON.LLM.REJECTED"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
        provider_message: str | None = None,
        provider_param: str | None = None,
        provider_code: str | None = None,
    ) -> None:
        super().__init__(message, status=status, attempts=attempts)
        # What the provider said, as it said it (secrets blanked): the graceful downgrade reads these.
        self.provider_message = provider_message
        self.provider_param = provider_param
        self.provider_code = provider_code


class LLMBadResponse(LLMError):
    code = "AEON.LLM.BAD_RESPONSE"


class LLMEmptyAnswer(LLMBadResponse):
    code = "AEON.LLM.EMPTY_ANSWER"


class LLMTruncated(LLMError):
    code = "AEON.LLM.TRUNCATED"

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage  # the tokens the cut-off answer still cost, so budgets count them


class LLMContextExceeded(LLMTruncated):
    code = "AEON.LLM.CONTEXT_WINDOW_EXCEEDED"


class LLMRefused(LLMError):
    code = "AEON.LLM.REFUSED"


class LLMContentFiltered(LLMRefused):
    code = "AEON.LLM.CONTENT_FILTERED"


class ScriptExhausted(LLMError):
    code = "AEON.LLM.SCRIPT_EXHAUSTED"


class ToolError(ApplicationError):
    code = "AEON.TOOL"


class ToolNotFound(ToolError):
    code = "AEON.TOOL.NOT_FOUND"


class ToolRegistrationError(ToolError):
    """A tool whose schema or signature cannot be registered, or something given as a tool that is none."""

    code = "AEON.TOOL.REGISTRATION"


class MemoryStoreError(ApplicationError):
    code = "AEON.MEMORY"


class MemoryKeyNotFound(MemoryStoreError):
    code = "AEON.MEMORY.NOT_FOUND"


class MemoryUnavailable(MemoryStoreError):
    code = "AEON.MEMORY.UNAVAILABLE"


class OutputFault(enum.StrEnum):
    """What is wrong with a model's answer, decided where the problem is found (never read back from its text)."""

    NOT_JSON = "not_json"  # no JSON value could be read from it
    CUT_OFF = "cut_off"  # it ends mid-value, or the model stopped at the token limit or said nothing
    MISSING_FIELD = "missing_field"  # a required field is left out
    INVALID = "invalid"  # anything else: a wrong type, value or shape


class OutputProblem(str):
    """One problem with a model's answer: its text, for the repair prompt and the records, and its `kind`. A plain
    string problem is of kind INVALID."""

    kind: OutputFault

    def __new__(cls, text: str, kind: OutputFault) -> OutputProblem:
        problem = super().__new__(cls, text)
        problem.kind = kind
        return problem

    def __getnewargs__(self) -> tuple[str, OutputFault]:  # type: ignore[override]  # copy and pickle keep the kind
        return str(self), self.kind


def missing_field(text: str) -> OutputProblem:
    return OutputProblem(text, OutputFault.MISSING_FIELD)


def faults(problems: Iterable[str]) -> frozenset[OutputFault]:
    return frozenset(p.kind if isinstance(p, OutputProblem) else OutputFault.INVALID for p in problems)


class UnrecoverableOutput(ApplicationError):
    """`faults` are the kinds of the problems left after the last repair."""

    code = "AEON.SUPERVISOR.UNRECOVERABLE"

    def __init__(self, message: str, *, target: str, errors: list[str], llm_repairs: int) -> None:
        super().__init__(message)
        self.target = target
        self.errors = errors
        self.llm_repairs = llm_repairs
        self.faults = faults(errors)


class BudgetExhausted(ApplicationError):
    code = "AEON.BUDGET.EXHAUSTED"

    def __init__(
        self, message: str, *, expiration_type: ExpirationType, phase: str | None = None, cap: Cap = Cap.TTL
    ) -> None:
        super().__init__(message)
        self.expiration_type = expiration_type
        self.phase = phase  # the phase about to be entered, for a boundary expiry
        self.cap = cap  # which ran out

    @classmethod
    def mid_phase(cls, hit: CapHit, what: str) -> BudgetExhausted:
        """A resource cap hit inside a phase: "max_llm_calls (30) exhausted before LLM call for plan"."""
        return cls(f"{hit.text} {what}", expiration_type=ExpirationType.MID_PHASE, cap=hit.cap)


class ContextViolation(ApplicationError):
    """The context of an LLM call breaks the context-propagation table; never retried."""

    code = "AEON.CONTEXT.VIOLATION"


class EventLogUnavailable(ApplicationError):
    code = "AEON.EVENTLOG.UNAVAILABLE"


class SystemDatabaseUnavailable(ApplicationError):
    """The durable runs' system database cannot be opened or set up (an unwritable folder, a full disk, a Postgres
    out of reach): nothing has run yet."""

    code = "AEON.DURABLE.DATABASE"


class InputError(ApplicationError):
    """A user-supplied plan, script or request that cannot be used; the message names it and the rule it breaks."""

    code = "AEON.INPUT"


class AlreadyDecided(InputError):
    """A second decision on a tool call (or the loser of two at once): the first stands; says what, by whom, when."""

    code = "AEON.APPROVAL.DECIDED"


class ConfigurationError(ApplicationError):
    """A config file missing, unreadable or off the schema (the message names the key or path), or settings that
    cannot work together."""

    code = "AEON.CONFIG"


class UsageError(ApplicationError):
    """The Python API called where or how it cannot work: aeon.run in a running event loop, an unknown keyword."""

    code = "AEON.USAGE"  # the code the CLI gives bad usage too


class InternalError(ApplicationError):
    """Never raised: the error a run's result and run_end record carry when a bug ended the run."""

    code = "AEON.INTERNAL"


class ApprovalExpired(ApplicationError):
    """No decision on a tool call that needs approval came within run.approval_timeout: the run ends (its own
    status, approval_expired), the call never made."""

    code = "AEON.APPROVAL.EXPIRED"
