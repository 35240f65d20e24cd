"""The ledger: every call with its tokens and cost; an unknown price makes a cost unknown, never a guess."""

from __future__ import annotations

import pytest

from aeon.domain.ledger import CallEntry, Ledger, ModelPrice, estimate_prompt_tokens, price_of

GPT = ModelPrice(input=2.0, output=8.0, cached_input=0.5)


def call(phase: str, pass_number: int, *, cost: float | None = 0.001, prompt: int = 10, seconds: float = 0.1):
    return CallEntry(
        purpose="plan",
        phase=phase,
        pass_number=pass_number,
        step_id=None,
        model="m",
        prompt_tokens=prompt,
        completion_tokens=5,
        seconds=seconds,
        cost=cost,
    )


def test_cached_prompt_tokens_are_billed_at_the_cached_rate():
    # 1M prompt tokens of which 400k cached, 100k completion: 0.6 * 2 + 0.4 * 0.5 + 0.1 * 8
    assert GPT.cost(1_000_000, 100_000, cached_tokens=400_000) == pytest.approx(2.2)


def test_without_a_cached_price_cached_tokens_cost_the_input_rate_and_never_more_than_the_prompt():
    plain = ModelPrice(input=2.0, output=8.0)
    assert plain.cost(1_000_000, 0, cached_tokens=400_000) == pytest.approx(2.0)
    assert GPT.cost(100, 0, cached_tokens=1_000) == pytest.approx(100 * 0.5 / 1_000_000)


def test_a_dated_model_name_takes_the_price_of_its_longest_named_stem():
    prices = {"gpt-x": GPT, "gpt-x-mini": ModelPrice(input=0.1, output=0.4)}
    assert price_of(prices, "gpt-x-2025-01-01") is GPT
    assert price_of(prices, "gpt-x-mini-2025-01-01") is prices["gpt-x-mini"]
    assert price_of(prices, "gpt-xl") is None  # a different model, not a dated gpt-x
    assert price_of(prices, None) is None


def test_the_prompt_estimate_errs_high():
    text = "x" * 400  # about 100 real tokens
    assert estimate_prompt_tokens([text]) >= 100
    assert estimate_prompt_tokens([text, ""]) == estimate_prompt_tokens([text]) + 4  # each message has framing


def test_one_unpriced_call_makes_the_run_cost_unknown_for_good():
    ledger = Ledger()
    ledger.add(call("A", 1, cost=0.002))
    assert ledger.cost == pytest.approx(0.002)
    ledger.add(call("B", 1, cost=None))
    ledger.add(call("C", 1, cost=0.001))
    assert ledger.cost is None and ledger.total().cost is None


def test_the_report_sums_per_pass_and_per_phase_of_each_pass_in_call_order():
    ledger = Ledger()
    for entry in (call("A", 1), call("B", 1), call("C", 1), call("C", 1, prompt=20), call("C", 2)):
        ledger.add(entry)
    report = ledger.report()
    assert report.total.calls == 5 and report.total.prompt_tokens == 60
    assert {n: t.calls for n, t in report.by_pass.items()} == {"1": 4, "2": 1}
    assert [(p.pass_number, p.phase, p.tally.calls) for p in report.by_phase] == [
        (1, "A", 1),
        (1, "B", 1),
        (1, "C", 2),
        (2, "C", 1),
    ]
    c1 = report.by_phase[2].tally
    assert (c1.prompt_tokens, c1.cost) == (30, pytest.approx(0.002))
    assert len(report.calls) == 5
