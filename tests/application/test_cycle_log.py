"""User story 7: one JSONL record per orchestration cycle with all its fields, in order, errors included."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from aeon import testing
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.application.errors import EventLogUnavailable
from aeon.application.kernel.orchestrator import RunSettings

from harness import SUM_STEP, plan_json, run

FR038 = {"step_number", "plan_state", "llm_output", "supervisor_actions", "tool_calls", "ttl_remaining", "errors"}
REASON = {"step_id": "s2", "description": "Explain", "agent": "llm"}


def test_every_cycle_has_a_complete_record_in_order(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP, REASON), "fifteen"])
    cycles = r.cycles()
    assert [c["step_number"] for c in cycles] == [0, 1, 2]
    for c in cycles:
        assert c.keys() >= FR038
    assert cycles[0]["llm_output"] == [plan_json(SUM_STEP, REASON)]
    assert cycles[1]["tool_calls"][0]["output"] == 15
    assert cycles[2]["llm_output"] == ["fifteen"]


def test_records_share_one_uuid4_correlation_id_with_increasing_seq_and_iso_timestamps(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP)])
    records = r.records()
    ids = {x["correlation_id"] for x in records}
    assert ids == {r.result.correlation_id}
    assert uuid.UUID(r.result.correlation_id).version == 4
    assert [x["seq"] for x in records] == list(range(len(records)))
    assert all("T" in x["timestamp"] and x["timestamp"].endswith("+00:00") for x in records)


def test_each_line_is_one_json_object(tmp_path):
    r = run(tmp_path, ['```json\n{"goal": "g", "steps": [' + json.dumps(SUM_STEP) + ",]}\n```"])
    lines = r.log_path.read_text().splitlines()
    assert lines and all(isinstance(json.loads(line), dict) for line in lines)


def test_supervisor_actions_and_errors_land_in_their_cycle(tmp_path):
    bad = {"step_id": "s1", "description": "d", "tool": "calculator", "args": {"expression": "1/0"}}
    r = run(tmp_path, ['{"goal": "g"}', plan_json(bad)])
    planning, step = r.cycles()
    assert planning["supervisor_actions"][0]["kind"] == "llm_repair"
    assert "division by zero" in step["errors"][0].lower()


def test_error_ending_is_logged_as_a_cycle_with_the_error(tmp_path):
    r = run(tmp_path, [{"error": "unavailable"}, {"error": "unavailable"}])  # the phase contract retries once
    assert r.result.status == "error"
    assert r.result.error.code == "AEON.PHASE_TRANSITION.PROVIDER_UNAVAILABLE"
    last_cycle = r.cycles()[-1]
    assert "provider unavailable after 3 attempts" in last_cycle["errors"][-1]
    assert r.records()[-1]["event"] == "run_end"


def test_the_first_record_precedes_every_llm_call_so_an_unwritable_log_spends_nothing(tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    llm = ScriptedLLM([plan_json(SUM_STEP)])
    log = JsonlEventLog(Path("/dev/full"))
    log.open()
    orch = testing.orchestrator(llm, run=RunSettings(evaluate=False), log=log)
    with pytest.raises(EventLogUnavailable):
        asyncio.run(orch.run("calculate the sum of 5 and 10"))
    assert llm.requests == []
