"""A bug mid-run (an exception that is no AeonError) still ends the JSONL log with run_end, then reaches the CLI."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.domain.llm import Completion

from harness import SUM_STEP, plan_json, run
from multipass import first, profile

REASON = {"step_id": "s2", "description": "State the sum from s1", "agent": "llm"}


class BuggyLLM(ScriptedLLM):
    """Answers from its script, except that call `bug_at` raises what no adapter may raise: a plain bug."""

    def __init__(self, responses: Sequence[str], bug_at: int) -> None:
        super().__init__(responses, source="test-script")
        self.bug_at, self.calls = bug_at, 0

    async def complete(self, messages: Sequence[Any], **kw: Any) -> Completion:
        self.calls += 1
        if self.calls == self.bug_at:
            raise UnicodeEncodeError("utf-8", "\udcff", 0, 1, "surrogates not allowed")
        return await super().complete(messages, **kw)


@pytest.mark.parametrize(("bug_at", "step"), [(1, None), (2, "s2")], ids=["while-planning", "inside-a-step"])
def test_an_internal_error_after_run_start_still_ends_the_log_with_run_end(
    tmp_path: Path, bug_at: int, step: str | None
) -> None:
    llm = BuggyLLM([plan_json(SUM_STEP, REASON), "15"], bug_at=bug_at)
    with pytest.raises(UnicodeEncodeError):  # the CLI reports it as AEON.INTERNAL, exit 4 (traceback with --debug)
        run(tmp_path, [], llm=llm)

    records = _records(tmp_path)
    assert records[0]["event"] == "run_start"
    end = records[-1]
    assert end["event"] == "run_end"
    assert end["status"] == "error"
    assert end["error"]["code"] == "AEON.INTERNAL"
    assert end["error"]["message"].startswith("UnicodeEncodeError: 'utf-8' codec can't encode")
    assert end["error"]["step_id"] == step
    if step is not None:  # the step the bug cut short is failed in the last cycle, never left running
        last_cycle = [r for r in records if r["event"] == "cycle"][-1]
        states = {s["step_id"]: s["status"] for s in last_cycle["plan_state"]["steps"]}
        assert states == {"s1": "complete", "s2": "failed"}


def test_an_internal_error_in_a_later_pass_ends_the_log_with_run_end(tmp_path: Path) -> None:
    llm = BuggyLLM([first(profile(), plan_json(SUM_STEP))], bug_at=2)  # the first call after the plan ran
    with pytest.raises(UnicodeEncodeError):
        run(tmp_path, [], llm=llm, evaluate=True)
    assert _records(tmp_path)[-1]["event"] == "run_end"


def _records(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
