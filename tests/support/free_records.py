"""A log record of any kind and fields, for tests of the log's mechanics (the log writes any LogRecord)."""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec

from aeon.domain.log_records import LogRecord


@cache
def _kind(event: str, names: tuple[str, ...]) -> type[LogRecord]:
    fields = [(name, Any) for name in names]
    kind = msgspec.defstruct(f"Free_{event}", fields, bases=(LogRecord,), tag=event, kw_only=True)
    assert issubclass(kind, LogRecord)
    return kind


def rec(event: str, /, **fields: Any) -> LogRecord:
    """A record of kind `event` whose fields are `fields`, in the order given."""
    return _kind(event, tuple(fields))(**fields)
