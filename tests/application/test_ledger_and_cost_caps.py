"""The ledger (every call's tokens, latency and cost; sums per phase, pass and run) and the caps checked before a call
is sent: `--max-cost` and `run.max_tokens` against the call's worst case."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from aeon import testing
from aeon.application.kernel.run import RunSettings
from aeon.domain.ledger import ModelPrice, estimate_prompt_tokens, price_of
from aeon.domain.llm import Completion, Usage

from cli_harness import REQUEST, SUM_STEP, assert_exit, invoke, log_of, plan_json, records, scripted_config
from multipass import first, profile, verdict

PLAN = plan_json(SUM_STEP)
PROFILE = profile(1, sufficiency=1.0, breadth="narrow", confidence="low")
EVALUATION = verdict(True)
PRICE = ModelPrice(input=2.0, cached_input=0.5, output=8.0)  # USD per million tokens


def metered(*texts: str, model: str = "priced") -> testing.FunctionLLM:
    """Answers in order, each reporting 1000 prompt tokens (400 of them cached) and 100 completion tokens."""
    queue = list(texts)

    def answer(call: testing.LLMCall) -> Completion:
        usage = Usage(prompt_tokens=1000, completion_tokens=100, cached_tokens=400)
        return Completion(text=queue.pop(0), usage=usage, finish_reason="stop", model=model)

    return testing.FunctionLLM(answer, name=model)


def run(llm: testing.FunctionLLM, **settings: Any) -> tuple[Any, testing.ListLog]:
    log = testing.ListLog()
    orch = testing.orchestrator(llm, run=RunSettings(**settings), log=log)
    return asyncio.run(orch.run(REQUEST)), log


# -- the ledger ---------------------------------------------------------------------------------------------------
def test_each_call_is_priced_from_the_table_and_summed_per_phase_pass_and_run() -> None:
    result, log = run(metered(first(PROFILE, PLAN), EVALUATION), prices={"priced": PRICE})
    assert result.status == "completed" and result.converged is True
    one = (600 * 2.0 + 400 * 0.5 + 100 * 8.0) / 1_000_000  # uncached input, cached input, output
    ledger = result.ledger
    assert [c.purpose for c in ledger.calls] == ["profile_and_plan", "evaluate"]
    assert [c.phase for c in ledger.calls] == ["A", "C"]
    assert all(c.cost == pytest.approx(one) and c.cached_tokens == 400 for c in ledger.calls)
    t = ledger.total
    assert (t.calls, t.prompt_tokens, t.completion_tokens, t.cached_tokens) == (2, 2000, 200, 800)
    assert t.cost == pytest.approx(2 * one)
    assert [(p.phase, p.pass_number, p.tally.calls) for p in ledger.by_phase] == [("A", 1, 1), ("C", 1, 1)]
    assert ledger.by_pass["1"].cost == pytest.approx(2 * one)
    # the same figures in the budget, the history and the run_end record
    assert result.budget.cost == pytest.approx(2 * one)
    assert result.history.ledger.total == t and result.history.overall_statistics.cost == pytest.approx(2 * one)
    [end] = log.of("run_end")
    assert end["ledger"]["total"]["cost"] == pytest.approx(2 * one) and "calls" not in end["ledger"]
    assert [c["cost"] for c in log.of("llm_call")] == pytest.approx([one] * 2)


def test_a_model_missing_from_the_price_table_has_an_unknown_cost_never_a_guess() -> None:
    result, log = run(metered(first(PROFILE, PLAN), EVALUATION, model="unlisted"), prices={"priced": PRICE})
    assert result.status == "completed"
    assert all(c.cost is None for c in result.ledger.calls)
    assert result.ledger.total.cost is None and result.budget.cost is None
    assert result.ledger.total.prompt_tokens == 2000  # tokens are still counted
    assert [c["cost"] for c in log.of("llm_call")] == [None] * 2


def test_a_dated_model_name_uses_the_entry_it_extends() -> None:
    prices = {"gpt-x": PRICE, "gpt-x-mini": ModelPrice(input=1.0, output=1.0)}
    assert price_of(prices, "gpt-x-2025-01-01") is PRICE
    assert price_of(prices, "gpt-x-mini-2025-01-01") == prices["gpt-x-mini"]
    assert price_of(prices, "gpt-xl") is None and price_of(prices, None) is None


# -- caps before spending -----------------------------------------------------------------------------------------
def first_call_worst_cost(**settings: Any) -> float:
    """The worst case of a run's first call (its estimated prompt, the whole max_tokens): from the prompt a model
    was actually sent."""
    llm = metered(first(PROFILE, PLAN), EVALUATION)
    run(llm, prices={"priced": PRICE}, **settings)
    prompt = estimate_prompt_tokens([m.content for m in llm.calls[0].messages])
    return PRICE.cost(prompt, settings["llm_max_tokens"])


def test_a_cost_cap_just_above_one_calls_worst_case_lets_exactly_one_call_through() -> None:
    cap = first_call_worst_cost(llm_max_tokens=512) * 1.001
    llm = metered(first(PROFILE, PLAN), EVALUATION)
    result, log = run(llm, prices={"priced": PRICE}, llm_max_tokens=512, max_cost=cap)
    assert len(llm.calls) == 1  # counted at the model: the second call was never sent
    assert result.status == "ttl_expired" and result.ttl_expiration is not None
    assert (result.ttl_expiration.cap, result.ttl_expiration.expiration_type) == ("max_cost", "mid_phase")
    assert "the call was not sent" in result.ttl_expiration.message
    assert result.budget.llm_calls == 1 and result.budget.cost <= cap
    [blocked] = log.of("llm_call_not_sent")
    assert blocked["purpose"] == "evaluate" and blocked["cap"] == "max_cost"


def test_a_cost_cap_sends_nothing_to_a_model_it_cannot_price() -> None:
    llm = metered(first(PROFILE, PLAN), model="unlisted")
    result, _ = run(llm, prices={"priced": PRICE}, max_cost=100.0)
    assert llm.calls == []
    assert result.status == "ttl_expired" and result.ttl_expiration.cap == "max_cost"
    assert "not in the price table" in result.ttl_expiration.message


def test_a_token_cap_is_checked_against_the_worst_case_before_the_call() -> None:
    llm = metered(first(PROFILE, PLAN))
    result, log = run(llm, max_tokens=600, llm_max_tokens=512)  # any prompt + 512 is more than 600
    assert llm.calls == [] and result.budget.llm_calls == 0
    assert result.ttl_expiration is not None and result.ttl_expiration.cap == "max_tokens"
    [blocked] = log.of("llm_call_not_sent")
    assert blocked["worst_case"]["max_tokens"] == 512


def test_max_cost_on_the_command_line_stops_before_the_call_that_could_cross_it(tmp_path: Path) -> None:
    responses = [first(PROFILE, PLAN), EVALUATION]
    prices = {"scripted": {"input": 2.0, "cached_input": 0.5, "output": 8.0}}
    (tmp_path / "probe").mkdir()
    probe = scripted_config(tmp_path / "probe", responses, run={"evaluate": True}, prices=prices)
    assert_exit(invoke("run", REQUEST, "--config", probe, "--json", "-q", "--max-cost", "0.000001"), 3)
    [blocked] = [r for r in records(log_of(tmp_path / "probe")) if r["event"] == "llm_call_not_sent"]
    cap = blocked["worst_case"]["cost"] * 1.001  # just above the first call's worst case
    config = scripted_config(tmp_path, responses, run={"evaluate": True}, prices=prices)
    out = invoke("run", REQUEST, "--config", config, "--json", "-q", "--max-cost", str(cap))
    assert_exit(out, 3)
    doc = json.loads(out.stdout)
    assert doc["ttl_expiration"]["cap"] == "max_cost" and doc["budget"]["max_cost"] == pytest.approx(cap)
    assert doc["budget"]["llm_calls"] == 1 and doc["ledger"]["total"]["calls"] == 1
    assert [r["purpose"] for r in records(log_of(tmp_path)) if r["event"] == "llm_call"] == ["profile_and_plan"]


def test_inspect_shows_the_ledger_per_phase_with_the_run_total(tmp_path: Path) -> None:
    prices = {"scripted": {"input": 2.0, "output": 8.0}}
    config = scripted_config(tmp_path, [first(PROFILE, PLAN), EVALUATION], run={"evaluate": True}, prices=prices)
    history = tmp_path / "h.json"
    assert_exit(invoke("run", REQUEST, "--config", config, "--history", history, "-q"), 0)
    saved = json.loads(history.read_text())["ledger"]
    out = invoke("inspect", history)
    assert_exit(out, 0)
    table = out.stdout.split("ledger (LLM calls per phase")[1].splitlines()[1:5]
    assert [line.split()[:3] for line in table] == [
        ["pass", "phase", "calls"],
        ["1", "A", "1"],
        ["1", "C", "1"],
        ["all", "total", "2"],
    ]
    assert table[3].split()[-1] == f"{saved['total']['cost']:.6f}" and saved["total"]["cost"] > 0
