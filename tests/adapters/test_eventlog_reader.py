"""LogIndex: one run's records out of a shared JSONL log and its rotated files, in seq order, following the log as it
grows (a half-written line is read once it ends), rotates, or is cut shorter."""

from __future__ import annotations

import json
import os
from pathlib import Path

from aeon.adapters.eventlog.reader import LogIndex
from aeon.domain.log_records import UnknownRecord
from aeon.domain.log_run import WarningRecord


def _line(run: str, seq: int, message: str = "m", event: str = "warning") -> str:
    record = {"event": event, "correlation_id": run, "seq": seq, "timestamp": "t", "message": message}
    return json.dumps(record, separators=(",", ":")) + "\n"


def test_a_runs_records_come_out_of_a_shared_log_in_seq_order(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    log.write_text(_line("a", 1) + _line("b", 0) + "not json\n" + _line("a", 0) + '{"no": "run"}\n')

    index = LogIndex(log)

    assert [r.seq for r in index.records("a")] == [0, 1]
    assert [r.correlation_id for r in index.records("b")] == ["b"]
    assert index.records("c") == []


def test_records_appended_later_are_found_and_a_half_written_line_once_it_ends(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    log.write_text(_line("a", 0))
    index = LogIndex(log)
    assert len(index.records("a")) == 1

    whole = _line("a", 1, message="x" * 100)
    with log.open("a") as f:
        f.write(whole[:40])
    assert len(index.records("a")) == 1  # not a record yet
    with log.open("a") as f:
        f.write(whole[40:])

    assert [r.seq for r in index.records("a")] == [0, 1]
    assert index.records("a")[1] == WarningRecord(correlation_id="a", seq=1, timestamp="t", message="x" * 100)


def test_a_rotation_keeps_the_records_of_the_rotated_file(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    log.write_text(_line("a", 0) + _line("a", 1))
    index = LogIndex(log, keep=2)
    assert len(index.records("a")) == 2

    os.replace(log, tmp_path / "runs.jsonl.1")  # what JsonlEventLog does past rotate_bytes
    log.write_text(_line("a", 2))

    assert [r.seq for r in index.records("a")] == [0, 1, 2]


def test_a_log_cut_shorter_is_read_again(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    log.write_text(_line("a", 0) + _line("a", 1) + _line("a", 2))
    index = LogIndex(log)
    assert len(index.records("a")) == 3

    with log.open("r+") as f:
        f.truncate(0)
    log.write_text(_line("a", 7))

    assert [r.seq for r in index.records("a")] == [7]


def test_a_kind_this_version_does_not_know_is_read_as_an_unknown_record(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    log.write_text(_line("a", 0) + _line("a", 1, event="from_the_future"))

    first, second = LogIndex(log).records("a")

    assert isinstance(first, WarningRecord)
    assert second == UnknownRecord(
        event="from_the_future", correlation_id="a", seq=1, timestamp="t", fields={"message": "m"}
    )
