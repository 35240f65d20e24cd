"""User story 5: step results go to K/V memory and later steps read them; memory failures never stop a run."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from aeon.adapters.memory.inmemory import InMemoryKV
from aeon.application.errors import MemoryKeyNotFound, MemoryUnavailable
from aeon.domain.provenance import fence

from harness import SUM_STEP, document, plan_json, run


def test_results_are_searchable_by_step_prefix(tmp_path):
    two = dict(SUM_STEP, step_id="s2", args={"expression": "2 * 2"})
    r = run(tmp_path, [plan_json(SUM_STEP, two)])
    found = asyncio.run(r.memory.search("step:"))
    assert found == {"step:s1": {"status": "complete", "output": 15}, "step:s2": {"status": "complete", "output": 4}}


def test_reading_a_key_never_written_is_a_clear_not_found(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP)])
    with pytest.raises(MemoryKeyNotFound, match="step:nope"):
        asyncio.run(r.memory.read("step:nope"))


def test_values_written_before_the_run_are_visible_to_llm_steps(tmp_path):
    mem = InMemoryKV()
    asyncio.run(mem.write("step:earlier", "forty-two"))
    reason = {"step_id": "s1", "description": "Use the earlier value", "agent": "llm"}
    r = run(tmp_path, [plan_json(reason), "ok"], memory=mem)
    assert fence("forty-two", "step earlier") in r.llm.requests[1].messages[-1].content


class BrokenMemory(InMemoryKV):
    async def write(self, key: str, value: Any) -> None:
        raise MemoryUnavailable("disk on fire")


def test_memory_write_failure_is_logged_and_the_run_continues(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP, dict(SUM_STEP, step_id="s2"))], memory=BrokenMemory())
    assert r.result.status == "completed"
    assert [s["status"] for s in document(r.result)["plan"]["steps"]] == ["complete", "complete"]
    assert any(rec["event"] == "memory_error" for rec in r.records())
    assert "memory write failed" in r.cycles()[1]["errors"][0]
