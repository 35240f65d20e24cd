"""The audit log's record base: every JSONL line is one tagged LogRecord, stamped by the log that writes it.

The format is versioned by LOG_FORMAT_VERSION (documented in docs/log.schema.json and by `aeon schema log`). Version 1
is the shape Aeon wrote before the records were typed: the same kinds and field names, so older logs read as they are.
A reader tolerates fields it does not know (a newer writer's additions) and reads a kind it does not know, or a line
that does not fit its kind, as an UnknownRecord instead of failing.
"""

from __future__ import annotations

from typing import Any

import msgspec

LOG_FORMAT_VERSION = 1
STAMPS = ("event", "correlation_id", "seq", "timestamp")


class LogRecord(msgspec.Struct, kw_only=True, tag_field="event"):
    """One record of the audit log. `event` (the tag) names its kind; the log that writes it fills the stamps:
    the run's correlation_id (None before a run is bound), seq (0, 1, … per log) and an ISO 8601 UTC timestamp."""

    correlation_id: str | None = None
    seq: int = -1
    timestamp: str = ""

    @property
    def event(self) -> str:
        tag = self.__struct_config__.tag
        assert isinstance(tag, str)
        return tag


class UnknownRecord(msgspec.Struct, kw_only=True):
    """A line of a kind this version does not know, or that does not fit its kind: its stamps and its fields."""

    event: str
    correlation_id: str | None = None
    seq: int = -1
    timestamp: str = ""
    fields: dict[str, Any] = msgspec.field(default_factory=dict)
