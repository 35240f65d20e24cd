"""JsonlEventLog keeps large texts once: a repeat is a marker, a long first copy keeps its head, a record has a cap.

JsonlEventLog rotates by size (runs.jsonl.1 … .N) and keeps every line whole with many processes appending.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from free_records import rec

from aeon.adapters.eventlog import JsonlEventLog

REPEAT = re.compile(r"^\[aeon:repeat seq=(\d+) bytes=(\d+) sha256=([0-9a-f]{16})\]$")


CUT = re.compile(r"\[aeon:truncated bytes=(\d+) sha256=([0-9a-f]{16}) kept=(\d+)\]$")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def stream_log(**options: Any) -> tuple[JsonlEventLog, io.StringIO]:
    stream = io.StringIO()
    return JsonlEventLog(None, stream=stream, **options), stream


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    text = stream.getvalue()
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


class BreakableStream(io.StringIO):
    broken = False

    def write(self, text: str) -> int:
        if self.broken:
            raise OSError(28, "No space left on device")
        return super().write(text)


def test_a_repeat_of_a_large_text_is_a_marker_naming_its_size_hash_and_the_record_that_holds_it() -> None:
    answer = "é" + "forty-two " * 500  # 5 001 characters, 5 002 bytes
    log, stream = stream_log()
    log.emit(rec("llm_call", output=answer))
    log.emit(rec("step", note="small"))
    log.emit(rec("cycle", llm_output=[answer], plan_state={"steps": [{"step_output": answer}]}))

    first, _, cycle = lines(stream)
    assert first["output"] == answer
    marker = REPEAT.match(cycle["llm_output"][0])
    assert marker is not None, cycle["llm_output"][0]
    assert marker.groups() == ("0", str(len(answer.encode())), sha(answer))
    assert cycle["plan_state"]["steps"][0]["step_output"] == cycle["llm_output"][0]


def test_a_repeat_inside_one_record_points_at_that_record() -> None:
    answer = "x" * 2000
    log, stream = stream_log()
    log.emit(rec("small"))
    log.emit(rec("cycle", a=answer, b=answer))
    record = lines(stream)[1]
    assert record["a"] == answer
    assert REPEAT.match(record["b"]) is not None and record["b"].startswith("[aeon:repeat seq=1 ")


@pytest.mark.parametrize("unit", ['"', "\\", '\\"', "\n", "\x01", "é", "\u2028", "😀", 'a"b\\'])
def test_a_text_of_exactly_1_kib_characters_is_found_however_it_is_escaped(unit: str) -> None:
    text = (unit * 1024)[:1024]
    around = {"pad": ["p", 'q"', "r\\"] * 200}  # short strings all around: no stretch of the line free of quotes
    log, stream = stream_log()
    log.emit(rec("e", **around, text=text))
    log.emit(rec("e", text=text, **around))
    first, second = lines(stream)
    assert first["text"] == text and first["pad"] == around["pad"]
    assert REPEAT.match(second["text"]) is not None


def test_texts_under_the_threshold_are_logged_verbatim_every_time() -> None:
    text = "y" * 1023
    log, stream = stream_log()
    for _ in range(3):
        log.emit(rec("e", text=text, nested={"list": [text]}))
    assert all(r["text"] == text and r["nested"]["list"] == [text] for r in lines(stream))


def test_a_first_copy_over_the_string_cap_keeps_its_head_and_names_its_size_and_hash() -> None:
    text = "".join(f"line {i} of the answer\n" for i in range(20_000))  # ~490 kB
    log, stream = stream_log(max_string_bytes=64 * 1024)
    log.emit(rec("llm_call", output=text, small="kept"))
    log.emit(rec("cycle", llm_output=[text]))

    first, second = lines(stream)
    cut = CUT.search(first["output"])
    assert cut is not None
    size, digest, kept = cut.groups()
    assert (int(size), digest) == (len(text.encode()), sha(text))
    head = first["output"][: cut.start()]
    assert text.startswith(head) and len(head.encode()) == int(kept)
    assert len(json.dumps(first["output"], ensure_ascii=False).encode()) - 2 <= 64 * 1024  # escapes counted
    assert first["small"] == "kept"
    assert REPEAT.match(second["llm_output"][0]).groups() == ("0", size, digest)  # type: ignore[union-attr]


def test_a_cut_never_splits_a_multibyte_character() -> None:
    text = "€" * 40_000  # 3 bytes each
    log, stream = stream_log(max_string_bytes=10_001)
    log.emit(rec("e", text=text))
    value = lines(stream)[0]["text"]
    assert set(value[: CUT.search(value).start()]) == {"€"}  # type: ignore[union-attr]


def test_a_record_over_the_record_cap_has_its_largest_strings_cut_until_it_fits() -> None:
    cap = 64 * 1024
    big, middle = "b" * 50_000, "m" * 30_000
    log, stream = stream_log(max_record_bytes=cap, max_string_bytes=cap)
    log.bind("corr")
    log.emit(rec("cycle", big=big, middle=middle, small="s" * 500, number=7, items=[1, 2, 3]))

    raw = stream.getvalue()
    assert raw.count("\n") == 1 and len(raw.encode()) - 1 <= cap
    record = json.loads(raw)
    assert (record["event"], record["correlation_id"], record["seq"]) == ("cycle", "corr", 0)
    assert record["timestamp"]
    assert record["middle"] == middle and record["small"] == "s" * 500
    assert record["number"] == 7 and record["items"] == [1, 2, 3]
    cut = CUT.search(record["big"])
    assert cut is not None and cut.group(1) == "50000" and cut.group(2) == sha(big)


def test_escaped_text_is_measured_as_written() -> None:
    cap = 16 * 1024
    quoted = '"\\\n\x01' * 20_000  # every character escaped, one to six bytes each on the line
    log, stream = stream_log(max_record_bytes=cap, max_string_bytes=1024 * 1024)
    log.emit(rec("e", text=quoted))
    raw = stream.getvalue().encode()
    assert len(raw) - 1 <= cap
    value = json.loads(raw)["text"]
    assert quoted.startswith(value[: CUT.search(value).start()])  # type: ignore[union-attr]


def test_a_record_of_many_small_fields_over_the_cap_is_still_one_valid_line_with_its_stamps() -> None:
    cap = 4096
    log, stream = stream_log(max_record_bytes=cap)
    log.bind("corr")
    log.emit(rec("huge", **{f"k{i}": i for i in range(2000)}))
    raw = stream.getvalue()
    assert raw.count("\n") == 1 and len(raw.encode()) - 1 <= cap
    record = json.loads(raw)
    assert (record["event"], record["correlation_id"], record["seq"]) == ("huge", "corr", 0)
    assert record["_oversized"]["bytes"] > cap and len(record["_oversized"]["sha256"]) == 16


def test_secrets_are_redacted_before_a_large_text_is_cut_or_hashed() -> None:
    secret = "sk-live-0123456789abcdef"
    cut_at = 8 * 1024
    text = "a" * (cut_at - 150 - 10) + secret + "b" * 20_000 + secret  # one secret across the cut, one beyond it
    log, stream = stream_log(secrets=[secret], max_string_bytes=cut_at)
    log.emit(rec("llm_call", output=text))
    log.emit(rec("cycle", llm_output=[text]))

    raw = stream.getvalue()
    for n in range(6, len(secret) + 1):
        assert secret[:n] not in raw
    redacted = text.replace(secret, "[REDACTED]")
    first, second = lines(stream)
    assert CUT.search(first["output"]).group(2) == sha(redacted)  # type: ignore[union-attr]
    assert REPEAT.match(second["llm_output"][0]).group(3) == sha(redacted)  # type: ignore[union-attr]


def test_a_large_text_whose_record_was_lost_is_written_in_full_next_time() -> None:
    text = "z" * 5000
    stream = BreakableStream()
    log = JsonlEventLog(None, stream=stream)
    stream.broken = True
    log.emit(rec("lost", text=text))
    stream.broken = False
    log.emit(rec("kept", text=text))
    log.emit(rec("again", text=text))
    kept, again = (json.loads(line) for line in stream.getvalue().splitlines())
    assert kept["text"] == text
    assert again["text"].startswith("[aeon:repeat seq=1 ")


def test_repeats_never_point_into_another_run() -> None:
    text = "w" * 3000
    log, stream = stream_log()
    log.bind("run-1")
    log.emit(rec("e", text=text))
    log.bind("run-2")
    log.emit(rec("e", text=text))
    assert [r["text"] for r in lines(stream)] == [text, text]


@pytest.mark.parametrize(("options", "problem"), [({"max_record_bytes": 100}, "max_record_bytes")])
def test_caps_too_small_to_hold_a_marker_are_refused(options: dict[str, int], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        JsonlEventLog(None, **options)


# -- JsonlEventLog rotates by size (runs.jsonl.1 … .N) and keeps every line whole with many processes appending --- --


CHILD = """
import sys
from pathlib import Path
from aeon.adapters.eventlog import JsonlEventLog
from aeon.domain.log_records import LogRecord

class Tick(LogRecord, tag="tick", kw_only=True):
    i: int
    text: str

path, who, count, rotate = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
log = JsonlEventLog(path, rotate_bytes=rotate, keep=10_000)
log.open()
log.bind(who)
sys.stdin.readline()  # every writer starts on the same signal
for i in range(count):
    log.emit(Tick(i=i, text=f"{who}:{i}:" + "y" * (i % 300)))
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
        log.emit(rec("tick", i=i, text="x" * 100))
    log.close()

    files = generations(path)
    assert [p.name for p in files] == ["runs.jsonl.2", "runs.jsonl.1", "runs.jsonl"]
    assert all(0 < p.stat().st_size <= 2000 for p in files)
    seqs = [r["seq"] for r in read(files)]
    assert seqs == list(range(seqs[0], 100))  # the newest records, in order, none missing across the files


def test_a_record_larger_than_the_rotation_size_gets_a_file_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    log = JsonlEventLog(path, rotate_bytes=1024, keep=3)
    log.emit(rec("small"))
    log.emit(rec("big", text="q" * 3000))
    log.emit(rec("small"))
    log.close()
    assert [[r["event"] for r in read([p])] for p in generations(path)] == [["small"], ["big"], ["small"]]


def test_a_repeat_after_a_rotation_is_written_again_not_pointed_at(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    text = "r" * 3000
    log = JsonlEventLog(path, rotate_bytes=4096, keep=3)
    log.emit(rec("first", text=text))
    log.emit(rec("filler", text="f" * 1500))
    log.emit(rec("second", text=text))  # lands in a new file: its first copy is in runs.jsonl.1
    log.close()
    assert [r["text"] for r in read([path])] == [text]


def test_without_a_rotation_size_the_log_only_grows(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    log = JsonlEventLog(path, rotate_bytes=None)
    for i in range(50):
        log.emit(rec("tick", text="x" * 100 + str(i)))
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
