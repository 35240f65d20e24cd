"""ReplayLog: a run's event log that a re-executed durable run does not write twice, nor leave with holes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import msgspec

from aeon.domain.audit_log import decode_record
from aeon.domain.log_records import LogRecord
from aeon.domain.records import LostRecords


class NumberedLog(Protocol):
    """A LoggerPort that numbers its records (`next_seq`) and can number on without writing (`skip`)."""

    @property
    def next_seq(self) -> int: ...

    def skip(self, count: int = 1) -> None: ...

    def open(self) -> None: ...

    def bind(self, correlation_id: str) -> None: ...

    def emit(self, record: LogRecord) -> None: ...

    def lost(self) -> LostRecords | None: ...

    def close(self) -> None: ...


class ReplayLog:
    """Satisfies LoggerPort. `written` records of this run are already in the log (a crash cut the run after them):
    a re-executed run emits them again in the same order, with the same seq, and they are counted, not written.

    What a re-executed run emits is the same as the first time because every answer, tool result and checkpoint
    comes back from the record (a pure tool's result is computed again); the steps keep the seq reached after each
    call (`mark`) and a replayed step sets it again (`jump`), so records written inside a call (a retry, a
    downgrade) are skipped over too.

    With `count`, whether the run executes again is not known yet: its records are held until its first recorded
    step `settle`s it. That step ran now: nothing of this run can be in the log (nothing was written before it), so
    the log is not read. It came from the record: `count` reads how many records the log holds for the run.
    """

    def __init__(self, inner: NumberedLog, *, written: int = 0, count: Callable[[], int] | None = None) -> None:
        self._inner, self._written, self._count = inner, written, count
        self._held: list[LogRecord] | None = [] if count is not None else None

    def settle(self, *, again: bool) -> None:
        if self._held is None:
            return
        held, self._held = self._held, None
        if again and self._count is not None:
            self._written = self._count()
        for record in held:
            self.emit(record)

    def holding(self) -> bool:
        """Whether the records are still held (the run has not settled yet whether it executes again)."""
        return self._held is not None

    def mark(self) -> int:
        return self._inner.next_seq + len(self._held or ())

    def jump(self, seq: int) -> None:
        if seq > self._inner.next_seq:
            self._inner.skip(seq - self._inner.next_seq)

    def open(self) -> None:
        self._inner.open()

    def bind(self, correlation_id: str) -> None:
        self._inner.bind(correlation_id)

    def emit(self, record: LogRecord) -> None:
        if self._held is not None:
            self._held.append(record)
        elif self._inner.next_seq < self._written:
            self._inner.skip(1)
        else:
            self._inner.emit(record)

    def lost(self) -> LostRecords | None:
        return self._inner.lost()

    def close(self) -> None:
        self.settle(again=True)  # a run that recorded no step: the log says what it holds of it
        self._inner.close()


def mend_tail(path: Path) -> None:
    """End a line a crash cut short, so that the next record starts a line of its own (the fragment stays, as a
    line that is not a record, rather than swallowing the record appended to it).

    The newline is appended (O_APPEND), never written at an offset: other processes may be appending to the log,
    and one of their records may be half-way into the file when its end is read here. Then the record is not
    touched and only an empty line follows it, which no reader takes for a record."""
    try:
        with path.open("rb") as f:
            if f.seek(0, 2) == 0:
                return
            f.seek(-1, 2)
            if f.read(1) == b"\n":
                return
        with path.open("ab") as f:
            f.write(b"\n")
    except OSError:
        return


def records_written(path: Path, correlation_id: str, *, keep: int = 5) -> int:
    """How many records of run `correlation_id` the log at `path` (and its rotated files) holds: its last seq + 1.
    A line cut short by a crash, or not JSON, is not a record; a record of any kind counts (read with the union)."""
    last = -1
    for candidate in [path, *(path.with_name(f"{path.name}.{i}") for i in range(1, keep + 1))]:
        try:
            lines = candidate.read_bytes().splitlines()
        except OSError:
            continue
        needle = correlation_id.encode()
        for line in lines:
            if needle not in line:
                continue
            try:
                record = decode_record(line)
            except msgspec.DecodeError:
                continue
            if record.correlation_id == correlation_id:
                last = max(last, record.seq)
    return last + 1
