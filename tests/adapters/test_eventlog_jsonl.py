"""JsonlEventLog: one stamped JSON object per line, redacted, durable at close, and never fatal on write errors."""

from __future__ import annotations

import enum
import errno
import io
import json
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import msgspec
import pytest

from aeon.adapters.eventlog import JsonlEventLog
from aeon.adapters.eventlog.jsonl import UtcStamps
from aeon.application.errors import EventLogUnavailable
from aeon.application.ports import LoggerPort
from aeon.domain.log_records import LogRecord
from aeon.domain.log_run import WarningRecord
from aeon.domain.records import LostRecords

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


class Phase(enum.Enum):
    PLAN = "PLAN"
    EXECUTE = "EXECUTE"


class Call(msgspec.Struct, kw_only=True):
    tool: str
    args: dict[str, Any]


class Cycle(msgspec.Struct, kw_only=True):
    step_number: int
    phase: Phase
    calls: list[Call]
    at: datetime


# Record kinds of these tests' own: the log writes any LogRecord, whatever its kind.
class RunStarted(LogRecord, tag="run_started", kw_only=True):
    request: str


class StepDone(LogRecord, tag="step_done", kw_only=True):
    step_id: str
    output: Any


class RunFinished(LogRecord, tag="run_finished", kw_only=True):
    pass


class Ordered(LogRecord, tag="e", kw_only=True):
    b: int
    a: int


class Tick(LogRecord, tag="tick", kw_only=True):
    i: int
    payload: Any


class CycleNote(LogRecord, tag="cycle_note", kw_only=True):
    record: Cycle
    phase: Phase


class Odd(LogRecord, tag="odd", kw_only=True):
    where: Any
    error: Any


class Secretive(LogRecord, tag="secretive", kw_only=True):
    key: str
    prompt: str
    nested: Any
    call: Call


class Request(LogRecord, tag="request", kw_only=True):
    headers: dict[str, str]
    config: dict[str, str]


def note(text: str) -> WarningRecord:
    return WarningRecord(message=text)


def ticking_clock(start: datetime = T0) -> Any:
    ticks = iter(range(1000))
    return lambda: start + timedelta(seconds=next(ticks))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class CountingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


class FailingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.broken = True

    def write(self, text: str) -> int:
        if self.broken:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(text)


def test_jsonl_event_log_satisfies_the_logger_port() -> None:
    log: LoggerPort = JsonlEventLog(None)
    assert isinstance(log, LoggerPort)


def test_each_record_is_one_json_line_with_stamps_and_fields(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "deep" / "run.jsonl"
    log = JsonlEventLog(path, clock=ticking_clock())
    log.bind("corr-1")
    log.emit(RunStarted(request="add 5 and 10"))
    log.emit(StepDone(step_id="s1", output={"value": 15, "note": "multi\nline"}))
    log.emit(RunFinished())
    log.close()

    records = lines(path)
    assert len(path.read_text().splitlines()) == 3
    assert [r["seq"] for r in records] == [0, 1, 2]
    assert {r["correlation_id"] for r in records} == {"corr-1"}
    assert [r["event"] for r in records] == ["run_started", "step_done", "run_finished"]
    assert records[0] == {
        "event": "run_started",
        "correlation_id": "corr-1",
        "seq": 0,
        "timestamp": "2025-01-02T03:04:05+00:00",
        "request": "add 5 and 10",
    }
    assert records[1]["output"] == {"value": 15, "note": "multi\nline"}
    assert datetime.fromisoformat(records[2]["timestamp"]) == T0 + timedelta(seconds=2)


def test_timestamps_are_utc_whatever_the_clock_zone() -> None:
    stream = io.StringIO()
    plus_two = timezone(timedelta(hours=2))
    log = JsonlEventLog(None, stream=stream, clock=iter([datetime(2025, 1, 1, 12, tzinfo=plus_two)]).__next__)
    log.emit(note("e"))
    stamp = json.loads(stream.getvalue())["timestamp"]
    assert stamp == "2025-01-01T10:00:00+00:00"


def test_naive_clock_values_are_taken_as_utc() -> None:
    stream = io.StringIO()
    JsonlEventLog(None, stream=stream, clock=lambda: datetime(2025, 1, 1)).emit(note("e"))
    assert json.loads(stream.getvalue())["timestamp"] == "2025-01-01T00:00:00+00:00"


@pytest.mark.parametrize(
    "nanos",
    [
        1_767_225_600_000_000_000,  # 2026-01-01 00:00:00 exactly: no fraction, as isoformat writes it
        1_767_225_600_000_000_999,  # under a microsecond past: still none
        1_767_225_600_000_001_000,
        1_767_225_659_999_999_999,  # microseconds are cut, never rounded up into the next second
        1_767_225_660_123_456_789,
        951_782_400_500_000_000,  # 2000-02-29, a leap day
    ],
)
def test_system_clock_stamps_are_what_datetime_isoformat_writes(nanos: int) -> None:
    seconds, rest = divmod(nanos, 10**9)
    expected = datetime.fromtimestamp(seconds, UTC).replace(microsecond=rest // 1000).isoformat()
    assert UtcStamps(lambda: nanos)() == expected


def test_system_clock_stamps_follow_the_clock_across_seconds() -> None:
    ticks = iter([5 * 10**9 + 7_000, 5 * 10**9 + 9_000, 6 * 10**9, 3_600 * 10**9 + 1_000])
    stamps = UtcStamps(ticks.__next__)
    assert [stamps() for _ in range(4)] == [
        "1970-01-01T00:00:05.000007+00:00",
        "1970-01-01T00:00:05.000009+00:00",
        "1970-01-01T00:00:06+00:00",
        "1970-01-01T01:00:00.000001+00:00",
    ]


def test_a_line_holds_the_stamps_first_then_the_fields_in_the_order_the_kind_declares() -> None:
    stream = io.StringIO()
    log = JsonlEventLog(None, stream=stream, clock=lambda: T0)
    log.bind("c")
    log.emit(Ordered(b=1, a=2))
    log.emit(note("z"))
    assert stream.getvalue().splitlines() == [
        '{"event":"e","correlation_id":"c","seq":0,"timestamp":"2025-01-02T03:04:05+00:00","b":1,"a":2}',
        '{"event":"warning","correlation_id":"c","seq":1,"timestamp":"2025-01-02T03:04:05+00:00","message":"z"}',
    ]


def test_correlation_id_is_null_until_bound_and_fixed_after() -> None:
    stream = io.StringIO()
    log = JsonlEventLog(None, stream=stream)
    log.emit(note("before"))
    log.bind("abc")
    given = WarningRecord(message="after", correlation_id="spoofed", seq=99)
    log.emit(given)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["correlation_id"] is None
    assert second["correlation_id"] == "abc"
    assert second["seq"] == 1
    assert (given.correlation_id, given.seq) == ("spoofed", 99)  # the stamps go on a copy, never on the caller's


def test_each_record_is_a_single_write_call() -> None:
    stream = CountingStream()
    log = JsonlEventLog(None, stream=stream)
    for i in range(5):
        log.emit(Tick(i=i, payload={"nested": [1, 2, 3]}))
    assert stream.writes == 5
    assert len(stream.getvalue().splitlines()) == 5


def test_file_is_opened_lazily_and_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"event":"earlier"}\n')
    log = JsonlEventLog(path)
    assert path.read_text() == '{"event":"earlier"}\n'
    log.emit(note("later"))
    assert len(path.read_text().splitlines()) == 2  # flushed per record, readable before close
    log.close()
    assert [r["event"] for r in lines(path)] == ["earlier", "warning"]


def test_close_fsyncs_and_closes_the_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    log = JsonlEventLog(tmp_path / "log.jsonl")
    log.emit(note("e"))
    handle = log._file
    log.close()
    log.close()
    assert len(synced) == 1
    assert handle is not None and handle.closed


def test_msgspec_structs_enums_and_datetimes_round_trip() -> None:
    stream = io.StringIO()
    cycle = Cycle(step_number=3, phase=Phase.EXECUTE, calls=[Call(tool="calculator", args={"x": 1})], at=T0)
    JsonlEventLog(None, stream=stream).emit(CycleNote(record=cycle, phase=Phase.PLAN))
    line = msgspec.json.decode(stream.getvalue().strip())
    assert line["phase"] == "PLAN"
    assert msgspec.convert(line["record"], Cycle) == cycle


def test_unknown_types_fall_back_to_their_string_form() -> None:
    stream = io.StringIO()
    JsonlEventLog(None, stream=stream).emit(Odd(where=Path("/tmp/x"), error=ValueError("bad")))
    line = json.loads(stream.getvalue())
    assert line["where"] == "/tmp/x"
    assert line["error"] == "bad"


def test_secrets_are_redacted_in_nested_values_strings_and_structs() -> None:
    stream = io.StringIO()
    log = JsonlEventLog(None, stream=stream, secrets=["sk-live-123", ""])
    log.emit(
        Secretive(
            key="sk-live-123",
            prompt="use key sk-live-123 please",
            nested={"deep": [{"value": "sk-live-123"}, "x sk-live-123 y"]},
            call=Call(tool="http", args={"header": "Bearer sk-live-123"}),
        )
    )
    text = stream.getvalue()
    assert "sk-live-123" not in text
    line = json.loads(text)
    assert line["key"] == "[REDACTED]"
    assert line["prompt"] == "use key [REDACTED] please"
    assert line["nested"] == {"deep": [{"value": "[REDACTED]"}, "x [REDACTED] y"]}
    assert line["call"]["args"]["header"] == "Bearer [REDACTED]"


def test_credential_named_keys_are_redacted_whatever_their_value() -> None:
    stream = io.StringIO()
    headers = {"Authorization": "Bearer abc", "X-API-Key": "k1", "Content-Type": "application/json"}
    JsonlEventLog(None, stream=stream).emit(Request(headers=headers, config={"api_key": "k2", "model": "m"}))
    line = json.loads(stream.getvalue())
    assert line["headers"] == {
        "Authorization": "[REDACTED]",
        "X-API-Key": "[REDACTED]",
        "Content-Type": "application/json",
    }
    assert line["config"] == {"api_key": "[REDACTED]", "model": "m"}


def test_failing_writes_never_raise_warn_once_and_are_counted(capsys: pytest.CaptureFixture[str]) -> None:
    stream = FailingStream()
    log = JsonlEventLog(None, stream=stream)
    log.emit(note("a"))
    log.emit(note("b"))
    assert log.dropped == 2
    assert log.lost() == LostRecords(count=2, reason="<stream>: No space left on device")
    err = capsys.readouterr().err
    assert err.count("aeon: warning: event log write failed: OSError:") == 1
    assert "No space left on device" in err

    stream.broken = False
    log.emit(note("c"))
    assert json.loads(stream.getvalue())["seq"] == 2  # the gap in seq shows what was lost
    assert log.dropped == 2
    assert log.lost() == LostRecords(count=2, reason="<stream>: No space left on device")


def test_lost_is_none_while_every_record_is_written(tmp_path: Path) -> None:
    log = JsonlEventLog(tmp_path / "log.jsonl")
    log.open()
    log.emit(note("a"))
    log.emit(note("b"))
    log.close()
    assert log.lost() is None


def test_open_creates_the_folders_and_the_file_before_any_record(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "log.jsonl"
    JsonlEventLog(path).open()
    assert path.read_bytes() == b""


def test_open_raises_naming_the_path_and_the_reason_when_the_parent_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    path = tmp_path / "file" / "log.jsonl"
    with pytest.raises(EventLogUnavailable) as caught:
        JsonlEventLog(path).open()
    assert str(caught.value) == f"cannot write the event log {path}: Not a directory"


def test_open_raises_for_a_folder_that_cannot_be_written(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    (tmp_path / "ro").mkdir(mode=0o500)
    with pytest.raises(EventLogUnavailable, match="Permission denied"):
        JsonlEventLog(tmp_path / "ro" / "log.jsonl").open()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_after_open_a_first_record_that_cannot_be_written_raises_and_a_close_stays_quiet(
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = JsonlEventLog(Path("/dev/full"))
    log.open()  # a full device opens fine: only writing tells
    with pytest.raises(EventLogUnavailable, match=r"^cannot write the event log /dev/full: No space left on device$"):
        log.emit(note("run_start"))
    log.close()
    assert capsys.readouterr().err == ""  # the caller reports the raised error once; no warning besides it


def test_only_the_first_record_after_open_is_a_must(capsys: pytest.CaptureFixture[str]) -> None:
    stream = FailingStream()
    stream.broken = False
    log = JsonlEventLog(None, stream=stream)
    log.open()
    log.emit(note("a"))
    stream.broken = True
    log.emit(note("b"))  # counted and warned about, not raised
    assert log.lost() == LostRecords(count=1, reason="<stream>: No space left on device")
    assert "aeon: warning: event log write failed" in capsys.readouterr().err


def test_without_open_a_failing_first_record_is_counted_not_raised() -> None:
    log = JsonlEventLog(None, stream=FailingStream())
    log.emit(note("a"))
    assert log.dropped == 1


def test_unopenable_path_and_closed_stream_do_not_raise(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = JsonlEventLog(tmp_path)  # a directory cannot be opened as the log file
    log.emit(note("a"))
    log.close()
    assert log.dropped == 1

    stream = io.StringIO()
    stream.close()
    other = JsonlEventLog(None, stream=stream)
    other.emit(note("b"))
    other.close()
    assert other.dropped == 1
    assert capsys.readouterr().err.count("aeon: warning: event log write failed") == 2


def test_emit_after_close_is_dropped_not_raised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = JsonlEventLog(tmp_path / "log.jsonl")
    log.emit(note("a"))
    log.close()
    log.emit(note("late"))
    assert log.dropped == 1
    assert "the event log is closed" in capsys.readouterr().err
    assert [r["message"] for r in lines(tmp_path / "log.jsonl")] == ["a"]


def test_failing_fsync_at_close_is_reported_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    log = JsonlEventLog(tmp_path / "log.jsonl")
    log.emit(note("a"))
    log.close()
    assert "Input/output error" in capsys.readouterr().err
    assert log._file is None


def test_without_path_or_stream_the_log_is_a_counting_no_op(tmp_path: Path) -> None:
    log = JsonlEventLog(None)
    log.bind("x")
    log.emit(Odd(where=object(), error=None))
    log.emit(note("b"))
    log.close()
    assert log.next_seq == 2
    assert log.dropped == 0
    assert list(tmp_path.iterdir()) == []


def test_context_manager_closes_the_log(tmp_path: Path) -> None:
    with JsonlEventLog(tmp_path / "log.jsonl") as log:
        log.emit(note("a"))
    assert log._file is None
    assert len(lines(tmp_path / "log.jsonl")) == 1


def test_unicode_line_separators_stay_inside_one_record(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = JsonlEventLog(path)
    log.emit(StepDone(step_id="s1", output="a\u0085b\u2028c\u2029d"))
    log.close()
    (line,) = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["output"] == "a\u0085b\u2028c\u2029d"


def test_a_lone_surrogate_in_a_field_is_written_as_a_replacement_character_and_no_record_is_lost(tmp_path):
    import json as _json

    from aeon.adapters.eventlog.jsonl import JsonlEventLog as _Log

    path = tmp_path / "runs.jsonl"
    log = _Log(path)
    log.bind("c")
    log.emit(StepDone(step_id="s1", output={"text": "broken \ud83d emoji, whole \U0001f600", "usage": {"n": 1}}))
    log.close()
    (record,) = [_json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert record["output"]["text"] == "broken \ufffd emoji, whole \U0001f600" and log.lost() is None


class _Trickle(io.RawIOBase):
    """The log's own file, taking at most `most` bytes per write call (0: none at all)."""

    def __init__(self, real: Any, most: int) -> None:
        self.real, self.most = real, most

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return int(self.real.fileno())

    def write(self, data: Any) -> int:
        return int(self.real.write(bytes(data[: self.most])))


def test_a_short_write_is_followed_by_the_rest_of_the_line(tmp_path: Path) -> None:
    log = JsonlEventLog(tmp_path / "log.jsonl", clock=lambda: T0)
    log.open()
    log._file = _Trickle(log._file, 7)  # type: ignore[assignment]
    log.emit(note("x" * 50))
    log.emit(note("f"))
    lines = (tmp_path / "log.jsonl").read_text().splitlines()
    assert [json.loads(line)["message"] for line in lines] == ["x" * 50, "f"] and log.dropped == 0


def test_a_file_that_takes_no_bytes_loses_the_record_and_says_why(tmp_path: Path) -> None:
    log = JsonlEventLog(tmp_path / "log.jsonl", clock=lambda: T0)
    log.emit(note("first"))  # opens the file
    log._file = _Trickle(log._file, 0)  # type: ignore[assignment]
    log.emit(note("e"))
    lost = log.lost()
    assert lost is not None and lost.count == 1 and "the file took no bytes" in lost.reason
