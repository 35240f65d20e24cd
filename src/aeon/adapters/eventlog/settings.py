"""The `log:` section of the settings schema, and `open_event_log`: the run's JSONL log built from it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from aeon.adapters.eventlog.jsonl import KEEP, MAX_RECORD_BYTES, MAX_STRING_BYTES, ROTATE_BYTES, JsonlEventLog
from aeon.adapters.eventlog.shrink import MIN_CAP
from aeon.application.redaction import Redactor
from aeon.application.settings_section import Section


class LogSettings(Section):
    path: Path | None = Path(".aeon/runs.jsonl")
    # Texts of 1 KiB or more are written once per log; a repeat is a marker naming the record that holds the copy.
    max_string_bytes: int = Field(MAX_STRING_BYTES, ge=MIN_CAP, description="a text's first copy is cut past this")
    max_record_bytes: int = Field(
        MAX_RECORD_BYTES, ge=MIN_CAP, description="a record's largest texts are cut past this"
    )
    rotate_bytes: int | None = Field(ROTATE_BYTES, ge=MIN_CAP, description="rotate past this; null: never")
    keep: int = Field(KEEP, ge=1, description="backups kept when rotating: runs.jsonl.1 (newest) … runs.jsonl.N")

    @field_validator("path", mode="before")
    @classmethod
    def _blank_is_off(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v


def open_event_log(log: LogSettings, redactor: Redactor) -> Iterator[JsonlEventLog]:
    """The run's log, closed (flushed, fsynced) at shutdown. The file opens on the first record, or on `open()`,
    which the CLI calls as its check that the log can be written before anything is spent."""
    event_log = JsonlEventLog(
        log.path,
        redactor=redactor,
        max_string_bytes=log.max_string_bytes,
        max_record_bytes=log.max_record_bytes,
        rotate_bytes=log.rotate_bytes,
        keep=log.keep,
    )
    with event_log:
        yield event_log
