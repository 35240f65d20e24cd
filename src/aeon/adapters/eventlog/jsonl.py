"""JsonlEventLog: one typed record (aeon.domain.audit_log) a line, stamped, redacted, then rendered within its caps."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import msgspec

from aeon.adapters.eventlog.rotation import rotate_if_full
from aeon.adapters.eventlog.shrink import RecordShrinker, encode, escape_breaks, plain
from aeon.adapters.eventlog.snapshots import CheckedSnapshots
from aeon.application.errors import EventLogUnavailable
from aeon.application.json_text import without_lone_surrogates
from aeon.application.redaction import REDACTED, SECRET_KEYS, Redactor
from aeon.domain.log_records import STAMPS, LogRecord
from aeon.domain.records import LostRecords

__all__ = ["REDACTED", "SECRET_KEYS", "JsonlEventLog"]

MIB = 1024 * 1024
# the log's size bounds unless told (the `log:` settings section defaults to these)
MAX_RECORD_BYTES, MAX_STRING_BYTES, ROTATE_BYTES, KEEP = MIB, MIB // 4, 100 * MIB, 5
# fsync's answer for a log that is a device or a pipe (/dev/stderr, /dev/full): nothing to sync, not a failure
_UNSYNCABLE = frozenset({errno.EINVAL, errno.ENOTSUP})


class JsonlEventLog:
    """Satisfies LoggerPort. Every record carries event, correlation_id, seq and an ISO 8601 UTC timestamp.

    Records go to `path` (opened in append mode by `open` or the first record, parent folders created) and/or
    `stream`; with neither the log is a sink that only counts. Each record is one unbuffered `write` call.
    After `open`, the next record must be written: its failure raises EventLogUnavailable. Any other failing write
    never raises: the first failure is reported once on stderr and every lost record is counted in `dropped` (and
    `lost`). The record given is never changed: the stamps are set on a copy.
    Secrets are redacted first (the run's Redactor, or one made from `secrets`); then large texts are written once
    and records kept under `max_record_bytes` (RecordShrinker); a plan snapshot an earlier record carried is not
    checked again (CheckedSnapshots). The file rotates to path.1 … path.`keep` before a
    record would take it past `rotate_bytes` (None: never), also when other processes append to it.
    """

    def __init__(
        self,
        path: Path | None,
        *,
        clock: Callable[[], datetime] | None = None,
        secrets: Sequence[str] = (),
        redactor: Redactor | None = None,
        stream: IO[str] | None = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
        max_string_bytes: int = MAX_STRING_BYTES,
        rotate_bytes: int | None = ROTATE_BYTES,
        keep: int = KEEP,
    ) -> None:
        if keep < 1 or (rotate_bytes is not None and rotate_bytes < 1):
            raise ValueError(f"rotation needs keep >= 1 and rotate_bytes >= 1, got {keep} and {rotate_bytes}")
        self.path = path
        self.dropped = 0
        self._now: Callable[[], str] = UtcStamps() if clock is None else (lambda: _iso_utc(clock()))
        self._stream = stream
        self._file: io.FileIO | None = None
        self._rotate_bytes, self._keep = rotate_bytes, keep
        self._seq = 0
        self._correlation_id: str | None = None
        self._closed = False
        self._warned = False
        self._must_write = False  # set by open(): the next record proves the log can be written, or raises
        self._failure: str | None = None
        self._lock = threading.Lock()
        self._shrinker = RecordShrinker(
            max_record_bytes=max_record_bytes, max_string_bytes=max_string_bytes, stamps=STAMPS
        )
        self._redactor = redactor if redactor is not None else Redactor(secrets)
        self._snapshots = CheckedSnapshots(self._redactor)

    @property
    def redactor(self) -> Redactor:
        """What blanks the secrets of every record: the run's Redactor when given (the one its other exits use)."""
        return self._redactor

    @property
    def next_seq(self) -> int:
        """The seq the next record will carry (also the number of records emitted so far, written or not)."""
        return self._seq

    def skip(self, count: int = 1) -> None:
        """Number on past `count` records without writing them: records a durable run wrote before a crash, which
        its re-execution emits again (the next record then carries the seq it had the first time)."""
        with self._lock:
            self._seq += count

    def open(self) -> None:
        """Open the file now and make the next record a must; raise EventLogUnavailable when it cannot be opened."""
        with self._lock:
            if self.path is not None and self._file is None:
                try:
                    self._file = _open_file(self.path)
                except OSError as exc:
                    raise EventLogUnavailable(f"cannot write the event log {self._why(exc)}") from exc
            self._must_write = True

    def bind(self, correlation_id: str) -> None:
        with self._lock:
            if correlation_id != self._correlation_id:
                self._shrinker.forget()  # a repeat marker points at a record of the same run, never another
            self._correlation_id = correlation_id

    def emit(self, record: LogRecord) -> None:
        with self._lock:
            seq = self._seq
            self._seq += 1
            if self.path is None and self._stream is None:
                return
            try:
                if self._closed:
                    raise ValueError("the event log is closed")
                self._write(record, seq, self._now())
            except Exception as exc:
                self.dropped += 1
                self._failure = self._failure or self._why(exc)
                if self._must_write:
                    self._must_write = False
                    raise EventLogUnavailable(f"cannot write the event log {self._why(exc)}") from exc
                self._warn(exc)
            self._must_write = False

    def lost(self) -> LostRecords | None:
        """How many records could not be written, and why the first of them failed; None when none were lost."""
        with self._lock:
            if not self.dropped:
                return None
            return LostRecords(count=self.dropped, reason=self._failure or "unknown reason")

    def close(self) -> None:
        """Flush, fsync and close the file (a caller's stream is only flushed). Idempotent; never raises."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._stream is not None:
                    self._stream.flush()
                if self._file is not None:
                    os.fsync(self._file.fileno())
            except OSError as exc:
                if exc.errno not in _UNSYNCABLE:
                    self._warn(exc)
            except Exception as exc:
                self._warn(exc)
            finally:
                if self._file is not None:
                    try:
                        self._file.close()
                    except Exception as exc:
                        self._warn(exc)
                    self._file = None

    def __enter__(self) -> JsonlEventLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _write(self, given: LogRecord, seq: int, timestamp: str) -> None:
        record = msgspec.structs.replace(given, correlation_id=self._correlation_id, seq=seq, timestamp=timestamp)
        line = self._render(record)  # rendering never changes `record`
        if self.path is not None and self._make_room(len(line) + 1):
            # A new file: a repeat marker must not point into the one just rotated away, so render again.
            line = self._render(record)
        # One write call per record keeps a line whole even when other processes append to the same file.
        if self._stream is not None:
            self._stream.write(line.decode() + "\n")
            self._stream.flush()
        if self._file is not None:
            data = line + b"\n"
            written = self._file.write(data)  # unbuffered: a failed record leaves nothing to be written twice or late
            if written != len(data):  # a short write (a full disk, a signal): the rest, or the reason it cannot
                self._write_rest(memoryview(data)[written or 0 :])
        self._shrinker.commit()

    def _write_rest(self, data: memoryview) -> None:
        assert self._file is not None
        while data:
            written = self._file.write(data)
            if not written:
                raise OSError(errno.EIO, "the file took no bytes")
            data = data[written:]

    def _make_room(self, incoming: int) -> bool:
        """Open the file, rotating it first when full; True when a file other than the last one is now open."""
        assert self.path is not None
        if self._file is None:
            self._file = _open_file(self.path)
            return False
        if self._rotate_bytes is None:
            return False
        if not rotate_if_full(self._file, self.path, incoming, limit=self._rotate_bytes, keep=self._keep):
            return False
        self._file.close()
        self._file = _open_file(self.path)
        self._shrinker.forget()
        return True

    def _why(self, exc: Exception) -> str:
        """Where the log goes and the OS reason it cannot: "/var/log/runs.jsonl: No space left on device"."""
        where = str(self.path) if self.path is not None else "<stream>"
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        return f"{where}: {reason}"

    def _warn(self, exc: Exception) -> None:
        if self._warned:
            return
        self._warned = True
        print(
            f"aeon: warning: event log write failed: {type(exc).__name__}: {exc} (further failures are only counted)",
            file=sys.stderr,
        )

    def _render(self, record: LogRecord) -> bytes:
        """The record encoded once, straight from its Structs; walked only to redact a secret or shrink a text."""
        line = self._snapshots.plain_line(record)  # a plan snapshot seen before is not checked again
        if line is not None and (line := self._shrinker.as_is(line)) is not None:
            return line
        try:
            raw = msgspec.json.encode(record, enc_hook=str)
        except (TypeError, UnicodeEncodeError):
            # A key JSON cannot take as it is (a tuple), or a lone surrogate (text decoded from "\\ud83d" alone):
            # the plain form makes every key a string, and a lone surrogate becomes U+FFFD.
            data = without_lone_surrogates(msgspec.to_builtins(record, enc_hook=str, str_keys=True))
            raw = msgspec.json.encode(data)
            return self._finish(data, raw)
        return self._finish(record, raw)

    def _finish(self, record: LogRecord | dict[str, Any], raw: bytes) -> bytes:
        """Redact (the one place a record is redacted on its way to the sink), then keep within the caps."""
        if self._redactor.may_hold(raw):
            scrubbed = self._redactor.scrub(plain(record))
            return self._shrinker.shrink(scrubbed, escape_breaks(encode(scrubbed)))
        line = escape_breaks(raw)
        if (shrunk := self._shrinker.shrink(record, line)) is line and not isinstance(record, dict):
            self._snapshots.mark_clean()  # nothing in it redacted or cut: its plan snapshots are clean
        return shrunk


def _open_file(path: Path) -> io.FileIO:
    # A parent that is a file: opening says so ("Not a directory") better than mkdir's "File exists".
    with contextlib.suppress(FileExistsError):
        path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("ab", buffering=0)


class UtcStamps:
    """Now as an ISO 8601 UTC timestamp, exactly as `datetime.now(UTC).isoformat()` writes it (no fraction when the
    microseconds are 0), from `time_ns`; the date and time of day are formatted once per second."""

    def __init__(self, time_ns: Callable[[], int] = time.time_ns) -> None:
        self._time_ns = time_ns
        self._second, self._prefix = -1, ""

    def __call__(self) -> str:
        second, nanos = divmod(self._time_ns(), 1_000_000_000)
        if second != self._second:
            self._second, self._prefix = second, datetime.fromtimestamp(second, UTC).isoformat()[:19]
        micros = nanos // 1000
        return f"{self._prefix}.{micros:06d}+00:00" if micros else f"{self._prefix}+00:00"


def _iso_utc(moment: datetime) -> str:
    # A naive datetime from an injected clock is taken to be UTC already.
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return aware.isoformat()
