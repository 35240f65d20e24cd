"""The budget meter: TTL in passes, caps checked before work and counted after it, time that survives a resume."""

from __future__ import annotations

import pytest

from aeon.domain.budget import BudgetLimits, BudgetMeter, BudgetState, Cap
from aeon.domain.llm import Usage


def meter(now: float = 100.0, **limits: object) -> BudgetMeter:
    fields: dict[str, object] = {"ttl": 3, "max_llm_calls": 5, **limits}
    return BudgetMeter(BudgetState.start(BudgetLimits(**fields)), now=now)  # type: ignore[arg-type]


def test_a_fresh_budget_starts_with_the_whole_ttl_and_nothing_spent():
    m = meter()
    assert m.state.ttl_remaining == 3 and m.state.llm_calls == 0 and m.state.tokens == 0
    assert m.exhausted(100.0) is None


def test_the_call_cap_stops_llm_work_but_not_a_tool_call_that_needs_no_llm():
    m = meter(max_llm_calls=1)
    assert m.spend(Usage(prompt_tokens=10, completion_tokens=5), 100.0) is None
    hit = m.exhausted(100.0)
    assert hit is not None and hit.cap is Cap.MAX_LLM_CALLS and hit.text == "max_llm_calls (1)"
    assert m.exhausted(100.0, needs_llm=False) is None


def test_the_token_cap_counts_prompt_and_completion_but_not_cached_tokens_twice():
    m = meter(max_tokens=100)
    assert m.spend(Usage(prompt_tokens=60, completion_tokens=30, cached_tokens=50), 100.0) is None
    assert (m.state.tokens, m.state.cached_tokens) == (90, 50)
    hit = m.spend(Usage(prompt_tokens=11, completion_tokens=0), 100.0)
    assert hit is not None and hit.cap is Cap.MAX_TOKENS
    stopped = m.exhausted(100.0, needs_llm=False)
    assert stopped is not None and stopped.cap is Cap.MAX_TOKENS  # token and time caps stop every kind of work


def test_a_failed_call_still_counts_as_a_call():
    m = meter()
    m.spend(None, 100.0)
    assert m.state.llm_calls == 1 and m.state.tokens == 0


def test_time_is_measured_from_the_clock_given_and_never_goes_negative():
    m = meter(now=100.0, max_seconds=10.0)
    assert m.remaining_seconds(104.0) == 6.0
    assert m.remaining_seconds(50.0) == 10.0  # a clock that stepped back spends nothing
    hit = m.exhausted(110.0)
    assert hit is not None and hit.cap is Cap.MAX_SECONDS and hit.text == "max_seconds (10)"
    assert m.remaining_seconds(200.0) == 0.0


def test_elapsed_time_continues_from_the_record_after_a_resume():
    first = meter(now=0.0, max_seconds=10.0)
    first.tick(7.0)
    resumed = BudgetMeter(first.state, now=5_000.0)  # a new process, a new monotonic clock
    assert resumed.remaining_seconds(5_001.0) == pytest.approx(2.0)


def test_a_call_whose_worst_case_could_cross_the_token_cap_is_not_sent():
    m = meter(max_tokens=100)
    m.spend(Usage(prompt_tokens=50, completion_tokens=10), 100.0)
    hit = m.would_cross(worst_tokens=41, worst_cost=None, spent_cost=None)
    assert hit is not None and hit.cap is Cap.MAX_TOKENS
    assert hit.text == "max_tokens (100): 60 spent, this call could take 41 more"
    assert m.would_cross(worst_tokens=40, worst_cost=None, spent_cost=None) is None


def test_a_cost_cap_refuses_an_unpriced_model_and_a_call_that_could_overspend():
    m = meter(max_cost=0.01)
    unpriced = m.would_cross(worst_tokens=1, worst_cost=None, spent_cost=0.0)
    assert unpriced is not None and unpriced.cap is Cap.MAX_COST and "not in the price table" in unpriced.text
    over = m.would_cross(worst_tokens=1, worst_cost=0.006, spent_cost=0.005)
    assert over is not None and over.cap is Cap.MAX_COST
    assert m.would_cross(worst_tokens=1, worst_cost=0.005, spent_cost=0.005) is None


def test_without_a_cost_cap_an_unpriced_model_is_fine():
    assert meter().would_cross(worst_tokens=1, worst_cost=None, spent_cost=None) is None


def test_each_completed_cycle_spends_exactly_one_ttl_and_an_escalation_gives_one_back():
    m = meter(ttl=3)
    m.end_cycle(0)
    assert m.state.ttl_remaining == 2 and not m.ttl_spent
    m.end_cycle(1)  # phase D escalated: one more pass
    assert m.state.ttl_remaining == 2
    m.end_cycle(0)
    m.end_cycle(0)
    assert m.ttl_spent


@pytest.mark.parametrize(("allocated", "pass_number", "left"), [(5, 1, 5), (5, 3, 3), (2, 4, 1)])
def test_allocating_ttl_counts_the_passes_already_run_and_keeps_the_running_cycle(allocated, pass_number, left):
    m = meter()
    m.allocate(allocated, pass_number)
    assert m.state.ttl_remaining == left
