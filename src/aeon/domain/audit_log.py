"""The audit log as one tagged union: every record kind, read back by type, and the JSON Schema generated from it."""

from __future__ import annotations

from typing import Any, cast

import msgspec

from aeon.domain.log_llm import (
    LLMCallNotSentRecord,
    LLMCallRecord,
    LLMDowngradeRecord,
    LLMErrorRecord,
    LLMGiveupRecord,
    LLMRetryRecord,
    LLMRetryRoundRecord,
    LocalCallTimingsRecord,
    LocalServerStartedRecord,
    LocalServerStoppedRecord,
    LocalSlotCacheSkippedRecord,
    LocalSlotRestoredRecord,
    LocalSlotSavedRecord,
    PrefixUncachedRecord,
    PromptClippedRecord,
)
from aeon.domain.log_pass import (
    AdvisoryRecord,
    CycleRecord,
    FallbackRecord,
    MemoryErrorRecord,
    PhaseEntryRecord,
    PhaseErrorRecord,
    PhaseExitRecord,
    PhaseRetryRecord,
    RefinementFailedRecord,
    RefinementRecord,
    RefinementSkippedRecord,
    SupervisorActionRecord,
    ToolCallRecord,
)
from aeon.domain.log_records import LOG_FORMAT_VERSION, STAMPS, LogRecord, UnknownRecord
from aeon.domain.log_run import (
    ApprovalDecidedRecord,
    ApprovalRequestedRecord,
    BatchStartRecord,
    DepthDecisionRecord,
    ProfileClampedRecord,
    RunEndRecord,
    RunForkedRecord,
    RunResumedRecord,
    RunStartRecord,
    ServeStartRecord,
    TtlAllocatedRecord,
    TtlExpiredRecord,
    WarningRecord,
)

AnyRecord = (
    RunStartRecord
    | RunResumedRecord
    | RunEndRecord
    | RunForkedRecord
    | BatchStartRecord
    | ServeStartRecord
    | WarningRecord
    | TtlAllocatedRecord
    | DepthDecisionRecord
    | ProfileClampedRecord
    | ApprovalRequestedRecord
    | ApprovalDecidedRecord
    | TtlExpiredRecord
    | PhaseEntryRecord
    | PhaseExitRecord
    | PhaseErrorRecord
    | PhaseRetryRecord
    | CycleRecord
    | SupervisorActionRecord
    | ToolCallRecord
    | FallbackRecord
    | MemoryErrorRecord
    | RefinementRecord
    | RefinementSkippedRecord
    | RefinementFailedRecord
    | AdvisoryRecord
    | LLMCallRecord
    | LLMErrorRecord
    | LLMCallNotSentRecord
    | LLMRetryRoundRecord
    | LLMRetryRecord
    | LLMGiveupRecord
    | LLMDowngradeRecord
    | PromptClippedRecord
    | PrefixUncachedRecord
    | LocalServerStartedRecord
    | LocalCallTimingsRecord
    | LocalServerStoppedRecord
    | LocalSlotRestoredRecord
    | LocalSlotSavedRecord
    | LocalSlotCacheSkippedRecord
)
ReadRecord = AnyRecord | UnknownRecord
KINDS: tuple[type[LogRecord], ...] = AnyRecord.__args__
# Lines an older writer gave a kind's name in another shape: read as this kind when they do not fit their own.
_FORMER_SHAPES: dict[str, type[LogRecord]] = {"phase_retry": LLMRetryRoundRecord}

_DECODER: msgspec.json.Decoder[AnyRecord] = msgspec.json.Decoder(AnyRecord)


def decode_record(line: bytes | str) -> ReadRecord:
    """One JSONL line as its record; a kind this version does not know, or a line that does not fit its kind, as an
    UnknownRecord. Raises msgspec.DecodeError when the line is not a JSON object with a string `event`."""
    try:
        return _DECODER.decode(line)
    except msgspec.ValidationError:
        pass
    data = msgspec.json.decode(line)
    return as_record(data) if isinstance(data, dict) else _not_a_record()


def as_record(data: dict[str, Any]) -> ReadRecord:
    """A record already decoded as a JSON object (a mapping), read as its kind like `decode_record` does."""
    event = data.get("event")
    if not isinstance(event, str):
        return _not_a_record()
    for kind in (_BY_TAG.get(event), _FORMER_SHAPES.get(event)):
        if kind is None:
            continue
        try:
            return cast(AnyRecord, msgspec.convert({**data, "event": kind.__struct_config__.tag}, kind))
        except msgspec.ValidationError:
            continue
    stamps = {k: data[k] for k in STAMPS[1:] if k in data}
    fields = {k: v for k, v in data.items() if k not in STAMPS}
    try:
        return UnknownRecord(event=event, fields=fields, **msgspec.structs.asdict(msgspec.convert(stamps, _Stamps)))
    except msgspec.ValidationError:
        return UnknownRecord(event=event, fields=fields)


def as_plain(record: ReadRecord) -> dict[str, Any]:
    """The record as the JSON object its line holds (an UnknownRecord's fields beside its stamps): for a display."""
    if isinstance(record, UnknownRecord):
        stamps = {"event": record.event, "correlation_id": record.correlation_id, "seq": record.seq}
        return {**stamps, "timestamp": record.timestamp, **record.fields}
    plain: dict[str, Any] = msgspec.to_builtins(record, enc_hook=str)
    return plain


class _Stamps(msgspec.Struct):
    correlation_id: str | None = None
    seq: int = -1
    timestamp: str = ""


def _not_a_record() -> UnknownRecord:
    raise msgspec.DecodeError("a log record is a JSON object with a string `event`")


_BY_TAG: dict[str, type[LogRecord]] = {str(k.__struct_config__.tag): k for k in KINDS}


def log_schema() -> dict[str, Any]:
    """The JSON Schema of one log line (any record kind), with the format version it describes."""
    schema: dict[str, Any] = msgspec.json.schema(AnyRecord)
    for kind in KINDS:  # the log stamps every record it writes (a kind that omits defaults may omit a null id)
        stamped = ("seq", "timestamp") if kind.__struct_config__.omit_defaults else STAMPS[1:]
        definition = schema["$defs"][kind.__name__]
        definition["required"] = sorted({*definition.get("required", ()), *stamped})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Aeon audit log record (one JSONL line)",
        "description": f"Aeon audit log format version {LOG_FORMAT_VERSION}: one JSON object per line, its kind "
        "named by `event`. Readers ignore fields they do not know and read unknown kinds as generic records.",
        "x-aeon-log-format-version": LOG_FORMAT_VERSION,
        **schema,
    }
