"""The audit log read back by type: logs written before the records were typed, unknown kinds and fields."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from aeon.domain.audit_log import KINDS, as_plain, as_record, decode_record
from aeon.domain.log_llm import LLMRetryRoundRecord
from aeon.domain.log_pass import CycleRecord, PhaseRetryRecord, ToolCallRecord
from aeon.domain.log_records import UnknownRecord
from aeon.domain.log_run import RunEndRecord, RunStartRecord

# Written by main at commit 3a2520f (before the records were typed), from the repository root:
#   for c in two-pass malformed-convergence never-converges priced approval refine-completed-step; do
#     aeon run "calculate the sum of 5 and 10" --config config/scripted-$c.yaml --no-durable -q --json \
#       --log-file tests/corpus/log-written-by-3a2520f.jsonl; done
OLD_LOG = Path(__file__).resolve().parents[1] / "corpus" / "log-written-by-3a2520f.jsonl"


def old_lines() -> list[bytes]:
    return OLD_LOG.read_bytes().splitlines()


def test_every_line_of_a_log_written_before_the_typed_records_reads_as_its_own_kind() -> None:
    records = [decode_record(line) for line in old_lines()]
    assert len(records) == 145
    assert not [r for r in records if isinstance(r, UnknownRecord)]
    assert [r.event for r in records] == [json.loads(line)["event"] for line in old_lines()]
    starts = [r for r in records if isinstance(r, RunStartRecord)]
    assert len(starts) == 6 and {s.request for s in starts} == {"calculate the sum of 5 and 10"}
    ends = [r for r in records if isinstance(r, RunEndRecord)]
    assert [e.status for e in ends] == ["completed", "error", "ttl_expired", "completed", "denied", "completed"]


def test_a_record_of_the_old_log_encodes_back_to_the_same_json() -> None:
    for line in old_lines():
        assert msgspec.json.decode(msgspec.json.encode(decode_record(line))) == json.loads(line)


def test_nested_records_of_a_cycle_read_as_their_types() -> None:
    cycles = [r for r in map(decode_record, old_lines()) if isinstance(r, CycleRecord) and r.tool_calls]
    assert cycles and cycles[0].tool_calls[0].tool == "calculator" and cycles[0].tool_calls[0].output == 15


def test_an_unknown_kind_reads_as_an_unknown_record_with_its_stamps_and_fields() -> None:
    line = b'{"event":"from_the_future","correlation_id":"r1","seq":7,"timestamp":"2030-01-01T00:00:00+00:00","x":1}'
    assert decode_record(line) == UnknownRecord(
        event="from_the_future", correlation_id="r1", seq=7, timestamp="2030-01-01T00:00:00+00:00", fields={"x": 1}
    )


def test_fields_a_reader_does_not_know_are_ignored() -> None:
    line = b'{"event":"tool_call","seq":1,"timestamp":"t","step_id":"s1","tool":"t","args":{},"new":2}'
    record = decode_record(line)
    assert isinstance(record, ToolCallRecord) and record.step_id == "s1"


def test_a_line_that_does_not_fit_its_kind_reads_as_unknown_not_as_an_error() -> None:
    record = decode_record(b'{"event":"tool_call","seq":"three","step_id":5}')
    assert isinstance(record, UnknownRecord) and record.event == "tool_call" and record.fields == {"step_id": 5}


def test_a_phase_retry_of_the_old_wait_shape_reads_as_an_llm_retry_round() -> None:
    old = (
        b'{"event":"phase_retry","seq":4,"purpose":"plan","reason":"AEON.LLM.UNAVAILABLE","phase":"A","wait_seconds":8}'
    )
    record = decode_record(old)
    assert record == LLMRetryRoundRecord(
        seq=4, purpose="plan", reason="AEON.LLM.UNAVAILABLE", phase="A", wait_seconds=8.0
    )
    retry = decode_record(old_lines()[next(i for i, x in enumerate(old_lines()) if b'"phase_retry"' in x)])
    assert isinstance(retry, PhaseRetryRecord) and retry.error_code.startswith("AEON.PHASE_TRANSITION.")


@pytest.mark.parametrize("line", [b"[1, 2]", b'{"seq": 1}', b"not json"])
def test_a_line_that_is_no_record_raises_a_decode_error(line: bytes) -> None:
    with pytest.raises(msgspec.DecodeError):
        decode_record(line)


def test_every_kind_has_its_own_event_name() -> None:
    tags = [kind.__struct_config__.tag for kind in KINDS]
    assert len(tags) == len(set(tags)) == 41


def test_as_plain_gives_the_object_a_line_holds_and_as_record_reads_it_back() -> None:
    unknown = b'{"event":"from_the_future","correlation_id":"r1","seq":7,"timestamp":"t","x":1}'
    for line in [*old_lines()[:20], unknown]:
        record = decode_record(line)
        assert as_plain(record) == json.loads(line)
        assert as_record(as_plain(record)) == record
