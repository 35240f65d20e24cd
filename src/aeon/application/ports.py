"""Ports: what the use cases need from the outside world, as structural Protocols spoken in domain types."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol, TypeVar, runtime_checkable

from aeon.domain.approval import ApprovalDecision, ApprovalRequest
from aeon.domain.llm import Completion, Message, ModelInfo
from aeon.domain.log_records import LogRecord
from aeon.domain.progress import ProgressEvent
from aeon.domain.records import LostRecords
from aeon.domain.run_state import RunState
from aeon.domain.schedules import Schedule
from aeon.domain.threads import Thread, ThreadContext, ThreadSummary
from aeon.domain.tools import ToolResult, ToolSpec


@runtime_checkable
class LLMPort(Protocol):
    """A language model.

    `complete` sends the messages and returns the text with token usage. When `schema` is given the adapter asks the
    provider to constrain the answer to that JSON schema (named `schema_name`); the caller still validates it.
    `stop` lists sequences that end the answer (the next few-shot label, so a base model stops after one answer).

    Raises (application.errors): LLMUnavailable after transient failures outlast the retry policy, LLMRejected for a
    refused request, LLMBadResponse for an unusable 2xx (LLMEmptyAnswer when there is no text at all), LLMTruncated
    when the token limit cut the answer (LLMContextExceeded when the context window did), LLMRefused for a refusal
    (LLMContentFiltered for a content filter), ScriptExhausted (scripted adapter only). Nothing else escapes. A
    parameter the provider refuses is dropped and the call sent again; `Completion.warnings` says what changed.
    `describe` says what answers: adapter, model and the provider dialect spoken, with why it was chosen.
    """

    def describe(self) -> ModelInfo: ...

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
        max_tokens: int | None = None,
        stop: Sequence[str] = (),
    ) -> Completion: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class ToolPort(Protocol):
    """The tool registry.

    `list` returns every registered tool, `get` one or None. `invoke` runs a tool with already-validated arguments
    and returns a ToolResult whose output is JSON data (values JSON cannot hold are kept as text and listed in
    `converted`); a tool that raises — sys.exit() and KeyboardInterrupt included — is reported as
    ToolResult(error=…), never as an exception (the caller's own cancellation still propagates). The caller checks
    the output against the tool's output_schema (as tools.output_check says when a return annotation gave it). A
    call still running when `time_left` seconds have passed is abandoned and reported with `cut_at_time_left` set.
    Raises ToolNotFound when `invoke` names an unregistered tool.
    """

    def list(self) -> list[ToolSpec]: ...

    def get(self, name: str) -> ToolSpec | None: ...

    async def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float | None = None) -> ToolResult: ...


@runtime_checkable
class MemoryPort(Protocol):
    """Key/value memory for step results, reached by the kernel only through this port.

    `read` raises MemoryKeyNotFound for a key never written; `search` returns every entry whose key starts with the
    prefix, in insertion order. A failing store raises MemoryUnavailable.
    """

    async def write(self, key: str, value: Any) -> None: ...

    async def read(self, key: str) -> Any: ...

    async def search(self, prefix: str) -> dict[str, Any]: ...


@runtime_checkable
class LoggerPort(Protocol):
    """The run's audit log. `emit` writes one record of aeon.domain.audit_log (the adapter fills its correlation_id,
    seq and timestamp, and redacts it on its way out: the one place records are redacted).

    `open` opens the log now, before anything is spent, and makes its next record a must: when the log cannot be
    opened, or that record cannot be written (a read-only folder, a full device), `open` or that `emit` raises
    EventLogUnavailable naming where the log goes and the OS reason. Any other failing write must not crash the run:
    adapters report it once as a warning, carry on, and count it; `lost` says how many records were lost and why
    (None when none were). `close` flushes and syncs. `bind` fixes the correlation_id stamped on every later record.
    A record's field values may be Structs (which may change after the call) or msgspec.Raw JSON: a logger encodes
    or copies them within `emit`, and never changes the record it is given.
    """

    def open(self) -> None: ...

    def bind(self, correlation_id: str) -> None: ...

    def emit(self, record: LogRecord) -> None: ...

    def lost(self) -> LostRecords | None: ...

    def close(self) -> None: ...


@runtime_checkable
class ProgressPort(Protocol):
    """Live progress: phase/step starts and ends, repairs, fallbacks, token rates, as the typed events of
    aeon.domain.progress, in the order they happen, already redacted. A run without a display has none (None).
    May raise: the run ignores a failing display."""

    def update(self, event: ProgressEvent) -> None: ...


@runtime_checkable
class ApproverPort(Protocol):
    """Asks a person about a tool call that needs approval and returns their decision, or None when none came
    within `wait_seconds`. `snapshot` is the run as it stands (for a display, or a suspended run's record).

    An approver may keep the run waiting for as long as `wait_seconds` says — a terminal prompt, a Python callback, a
    durable run waiting for a message from any process — and must never make the same request answer twice."""

    async def decide(
        self, request: ApprovalRequest, snapshot: RunState, *, wait_seconds: float
    ) -> ApprovalDecision | None: ...


@runtime_checkable
class CheckpointPort(Protocol):
    """Receives the whole run state at every phase boundary, before the phase starts (durable runs store it).

    `save` must keep what it is given byte for byte (the record is msgspec-encodable); a failure it raises ends the
    run like any other error of the phase about to start.
    """

    async def save(self, state: RunState) -> None: ...


@runtime_checkable
class ClockPort(Protocol):
    """Wall and monotonic time and waiting, injected so tests never sleep or depend on the real clock."""

    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SpanPort(Protocol):
    """One span of a trace, open while its work runs. Never raises."""

    def set(self, attributes: Mapping[str, Any]) -> None:
        """Add attributes (None values are left out)."""
        ...

    def fail(self, error_type: str) -> None:
        """Mark the span as failed with `error.type` (an error code), without ending it."""
        ...


@runtime_checkable
class TracerPort(Protocol):
    """Traces and the token-usage metric, named by the OpenTelemetry GenAI semantic conventions (application/tracing).

    `span` opens a span as a context manager; spans nest as they are opened (the run's span holds its phases'
    spans, which hold their calls' spans); an exception leaving the block marks the span failed and passes on.
    `capture_content`: the user opted in to prompt and answer text on spans (off by default). `token_usage` records
    one value of the `gen_ai.client.token.usage` histogram. `shutdown` exports what is pending (end of a run or of
    the process). Never raises: a failing exporter must not break a run.
    """

    capture_content: bool

    def span(self, name: str, attributes: Mapping[str, Any]) -> AbstractContextManager[SpanPort]: ...

    def token_usage(self, tokens: int, attributes: Mapping[str, Any]) -> None: ...

    def shutdown(self) -> None: ...


@runtime_checkable
class ThreadsPort(Protocol):
    """Where threads are kept (the system database). `load` gives a thread or None; `create` makes an empty one
    (or gives the one there); `update` applies `change` to the thread `name` (an empty one when it has none) in one
    transaction, so that two runs ending at once both keep their turn; `list` gives every thread, the latest
    updated first; `delete` removes a thread with everything it stored (False: there was none). Raises
    SystemDatabaseUnavailable when the store cannot be opened."""

    def load(self, name: str) -> Thread | None: ...

    def create(self, name: str, at: str) -> Thread: ...

    def update(self, name: str, at: str, change: Callable[[Thread], Thread]) -> Thread: ...

    def list(self) -> list[ThreadSummary]: ...

    def delete(self, name: str) -> bool: ...


@runtime_checkable
class SchedulesPort(Protocol):
    """Schedules on the system database (DBOS's scheduled workflows). `add` makes schedule `name` run `spec` (a
    durable run's recorded input, as JSON) at every tick of `cron`; `list` gives them by name; `pause`, `resume` and
    `remove` change one. Raises InputError for a cron expression that is not one (its message one line), for a
    name taken (`add`) or unknown (the others); SystemDatabaseUnavailable when the database cannot be opened."""

    def add(self, name: str, cron: str, spec: str) -> Schedule: ...

    def list(self) -> list[Schedule]: ...

    def pause(self, name: str) -> None: ...

    def resume(self, name: str) -> None: ...

    def remove(self, name: str) -> None: ...


Outcome_co = TypeVar("Outcome_co", covariant=True)
Row_co = TypeVar("Row_co", covariant=True)


@runtime_checkable
class DurableRuns(Protocol[Outcome_co, Row_co]):
    """Runs on a durable record, which any process sharing the record can go on with (adapters/durable: DBOS).

    `start` runs `request` (its `plan` a JSON plan document, or None) as run `run_id`, rebuilt from `config` (a
    file path) and `overrides` in any process that executes it, and returns its outcome; `progress` and `approver`
    serve the execution in this process only; `leave_when_waiting` returns as soon as the run waits for a decision
    nobody here can give; `thread`: the run belongs to that thread (its conversation so far, its memory) and
    leaves its turn there when it ends. `resume` goes on with an interrupted run, `fork` starts a new run
    (`new_id`) from run `run_id`'s checkpoint at pass `from_pass`, `answer` sends a decision on the call a run
    waits on (`go_on`: and finishes the run here), `list` the most recent runs, newest first, `outcome` a finished
    run's outcome (None: unfinished). Raises InputError for an unknown run, AlreadyDecided for a second decision,
    EventLogUnavailable when the run's log takes no record (the run never started), SystemDatabaseUnavailable when
    the record cannot be opened."""

    def start(
        self,
        run_id: str,
        request: str,
        *,
        plan: str | None = None,
        config: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        progress: ProgressPort | None = None,
        approver: ApproverPort | None = None,
        leave_when_waiting: bool = False,
        thread: ThreadContext | None = None,
    ) -> Outcome_co: ...

    def resume(self, run_id: str, *, rerun_unsafe: bool = False) -> Outcome_co: ...

    def fork(
        self,
        run_id: str,
        from_pass: int,
        *,
        config: str | None = None,
        progress: ProgressPort | None = None,
        new_id: str | None = None,
    ) -> Outcome_co: ...

    def answer(self, run_id: str, decision: ApprovalDecision, *, go_on: bool) -> Outcome_co | None: ...

    def list(self, limit: int = 100) -> Sequence[Row_co]: ...

    def outcome(self, run_id: str) -> Outcome_co | None: ...
