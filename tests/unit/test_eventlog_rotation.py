"""JsonlEventLog rotates by size (runs.jsonl.1 … .N) and keeps every line whole with many processes appending."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from aeon.adapters.eventlog import JsonlEventLog

CHILD = """
import sys
from pathlib import Path
from aeon.adapters.eventlog import JsonlEventLog

path, who, count, rotate = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
log = JsonlEventLog(path, rotate_bytes=rotate, keep=10_000)
log.open()
log.bind(who)
sys.stdin.readline()  # every writer starts on the same signal
for i in range(count):
    log.emit("tick", i=i, text=f"{who}:{i}:" + "y" * (i % 300))
log.close()
sys.exit(1 if log.lost() else 0)
"""


def generations(path: Path) -> list[Path]:
    """The log and its backups, oldest first."""
    backups = sorted(path.parent.glob(path.name + ".*"), key=lambda p: -int(p.suffix[1:]))
    return [*backups, path]


def read(paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(line) for p in paths for line in p.read_bytes().splitlines()]


def test_the_log_rotates_by_size_and_keeps_n_backups(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    log = JsonlEventLog(path, rotate_bytes=2000, keep=2)
    for i in range(100):
        log.emit("tick", i=i, text="x" * 100)
    log.close()

    files = generations(path)
    assert [p.name for p in files] == ["runs.jsonl.2", "runs.jsonl.1", "runs.jsonl"]
    assert all(0 < p.stat().st_size <= 2000 for p in files)
    seqs = [r["seq"] for r in read(files)]
    assert seqs == list(range(seqs[0], 100))  # the newest records, in order, none missing across the files


def test_a_record_larger_than_the_rotation_size_gets_a_file_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    log = JsonlEventLog(path, rotate_bytes=1024, keep=3)
    log.emit("small")
    log.emit("big", text="q" * 3000)
    log.emit("small")
    log.close()
    assert [[r["event"] for r in read([p])] for p in generations(path)] == [["small"], ["big"], ["small"]]


def test_a_repeat_after_a_rotation_is_written_again_not_pointed_at(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    text = "r" * 3000
    log = JsonlEventLog(path, rotate_bytes=4096, keep=3)
    log.emit("first", text=text)
    log.emit("filler", text="f" * 1500)
    log.emit("second", text=text)  # lands in a new file: its first copy is in runs.jsonl.1
    log.close()
    assert [r["text"] for r in read([path])] == [text]


def test_without_a_rotation_size_the_log_only_grows(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    log = JsonlEventLog(path, rotate_bytes=None)
    for i in range(50):
        log.emit("tick", text="x" * 100 + str(i))
    log.close()
    assert generations(path) == [path]


def test_ten_processes_appending_with_rotation_lose_no_record_and_split_no_line(tmp_path: Path) -> None:
    path, count, rotate = tmp_path / "runs.jsonl", 300, 16 * 1024
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), f"w{n}", str(count), str(rotate)],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(10)
    ]
    for w in writers:
        assert w.stdin is not None
        w.stdin.write("go\n")
        w.stdin.close()
    errors = [(w.wait(timeout=120), w.stderr.read() if w.stderr else "") for w in writers]
    assert errors == [(0, "")] * 10

    files = generations(path)
    assert len(files) > 5  # it did rotate, many times, under contention
    by_writer: dict[str, list[int]] = defaultdict(list)
    for record in read(files):  # json.loads fails on any split or merged line
        by_writer[record["correlation_id"]].append(record["i"])
    assert {w: sorted(i) for w, i in by_writer.items()} == {f"w{n}": list(range(count)) for n in range(10)}
    for w, order in by_writer.items():
        assert order == sorted(order), f"{w}'s records are out of order across the files"
    assert all(p.stat().st_size <= rotate + 10 * 1024 for p in files)  # over by at most a record per writer
