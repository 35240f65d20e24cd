"""A refinement is asked for only when a later pass can use it: not on the last pass the TTL allows, and not when
the calls or seconds left cannot pay for it and the next pass's evaluation. A skipped one is on the record, saying
why, and the run ends with the response its budget calls for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.domain.llm import Completion

from harness import FakeClock, run
from multipass import SUM_PLAN, add_step, first, profile, refine, verdict

STATE_IT = refine(add_step("s2", "State the sum from s1", agent="llm"))


class SlowLLM(ScriptedLLM):
    """A scripted model whose every answer takes `seconds` on the run's (fake) clock."""

    def __init__(self, responses: Sequence[str], clock: FakeClock, seconds: float) -> None:
        super().__init__(responses, source="test-script")
        self._clock, self._seconds = clock, seconds

    async def complete(self, messages: Sequence[Any], **kw: Any) -> Completion:
        self._clock.advance(self._seconds)
        return await super().complete(messages, **kw)


def skipped(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["event"] == "refinement_skipped"]


def test_a_run_allocated_one_pass_asks_for_no_refinement_it_cannot_run(tmp_path):
    one_pass = profile(1, 1.0, breadth="narrow", confidence="low")  # very low complexity: 1 pass of the cap's 3
    r = run(tmp_path, [first(one_pass, SUM_PLAN), verdict(False), STATE_IT], evaluate=True, ttl=3)
    res = r.result
    assert res.status == "ttl_expired" and res.ttl_expiration.cap == "ttl" and res.passes == 1
    assert len(r.llm.requests) == 2  # profile and plan, evaluation: no refinement
    (record,) = skipped(r.records())
    assert record["cap"] == "ttl"
    assert record["reason"] == "no pass can follow pass 1 to run a refined plan (TTL: 1 allocated of cap 3)"


def test_a_last_allocated_pass_that_phase_d_will_escalate_still_refines_for_the_pass_it_adds(tmp_path):
    two = profile(2, 1.0, breadth="narrow", confidence="low")  # low complexity: 2 passes of the cap's 3
    restate = refine(add_step("s3", "State the sum again", agent="llm"))
    script = [first(two, SUM_PLAN), verdict(False), STATE_IT, "The sum is 15.", verdict(False), restate]
    script += ["15.", verdict(True)]
    r = run(tmp_path, script, evaluate=True, ttl=3)
    assert r.result.status == "completed" and r.result.passes == 3  # failed twice in a row: a third pass added
    assert len(r.llm.requests) == 8 and skipped(r.records()) == []


def test_one_call_left_is_not_spent_on_a_refinement_the_next_pass_could_not_evaluate(tmp_path):
    script = [first(profile(3), SUM_PLAN), verdict(False), STATE_IT, "The sum is 15.", verdict(True)]
    r = run(tmp_path, script, evaluate=True, ttl=3, max_llm_calls=3)
    res = r.result
    assert len(r.llm.requests) == 2
    assert res.status == "ttl_expired" and res.ttl_expiration.cap == "max_llm_calls"
    assert "1 LLM call left; a refinement and the next pass's evaluation need 2" in res.ttl_expiration.message
    (record,) = skipped(r.records())
    assert record["cap"] == "max_llm_calls"


def test_too_few_seconds_left_for_a_refinement_and_an_evaluation_end_the_run_at_once(tmp_path):
    clock = FakeClock(step=0.0)
    script = [first(profile(3), SUM_PLAN), verdict(False), STATE_IT, "The sum is 15.", verdict(True)]
    llm = SlowLLM(script, clock, seconds=30.0)
    r = run(tmp_path, [], llm=llm, clock=clock, evaluate=True, ttl=3, max_seconds=100)
    res = r.result
    assert len(llm.requests) == 2  # 60 s spent, 40 s left: a refinement and an evaluation take about 60 s
    assert res.status == "ttl_expired" and res.ttl_expiration.cap == "max_seconds"
    assert "40.0 s left" in res.ttl_expiration.message and "mean LLM call so far 30.0 s" in res.ttl_expiration.message
    assert res.budget.ttl_remaining > 0  # passes were left: the time was not


def test_a_refinement_a_later_pass_can_use_is_still_asked_for(tmp_path):
    clock = FakeClock(step=0.0)
    script = [first(profile(3), SUM_PLAN), verdict(False), STATE_IT, "The sum is 15.", verdict(True)]
    llm = SlowLLM(script, clock, seconds=10.0)
    r = run(tmp_path, [], llm=llm, clock=clock, evaluate=True, ttl=3, max_seconds=100, max_llm_calls=5)
    assert r.result.status == "completed" and r.result.passes == 2
    assert len(llm.requests) == 5 and skipped(r.records()) == []
