"""The retry budget (application/llm/retry_budget.py) is what a run really spends: requests counted at the transport."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from wire_rules import openai_chat_response

from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.adapters.llm.settings import LLMSettings
from aeon.adapters.memory.inmemory import InMemoryKV
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.kernel.orchestrator import Orchestrator, RunSettings
from aeon.application.llm.retry_budget import malformed_calls, unavailable_requests, worst_requests
from aeon.application.results import RunResult

from harness import FakeClock, ListLog, ListProgress

pytestmark = pytest.mark.block_network

SHIPPED_ATTEMPTS = LLMSettings().max_attempts
UNAVAILABLE = httpx.Response(503, json={"error": {"message": "overloaded"}})
NOT_A_PLAN = httpx.Response(200, json=openai_chat_response(content="I would add the two numbers."))


class Counting:
    """A provider that answers request n with `answer(n)` (1-based) and counts what it was sent."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.requests = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return self.answer(self.requests)


async def _no_wait(_seconds: float) -> None:
    return None


def run(provider: Counting, attempts: int, **settings: Any) -> RunResult:
    llm = OpenAICompatLLM(
        "https://api.openai.com/v1",
        "gpt-4.1",
        "sk-test",
        max_attempts=attempts,
        transport=httpx.MockTransport(provider),
        sleep=_no_wait,  # the HTTP backoff; the gateway's pause between rounds goes through the fake clock
    )
    tools = ToolRegistry()
    register_builtins(tools)
    orch = Orchestrator(
        llm=llm,
        tools=tools,
        memory=InMemoryKV(),
        logger=ListLog(),
        progress=ListProgress(),
        clock=FakeClock(),
        settings=RunSettings(max_llm_calls=100, **settings),
    )

    async def go() -> RunResult:
        try:
            return await orch.run("calculate the sum of 5 and 10")
        finally:
            await llm.aclose()

    return asyncio.run(go())


def test_the_shipped_budget_is_six_requests_down_six_calls_malformed_and_36_requests_at_worst():
    assert SHIPPED_ATTEMPTS == 3
    assert (unavailable_requests(SHIPPED_ATTEMPTS), malformed_calls(), worst_requests(SHIPPED_ATTEMPTS)) == (6, 6, 36)


@pytest.mark.parametrize("attempts", [1, SHIPPED_ATTEMPTS])
def test_an_always_unavailable_provider_costs_a_run_exactly_the_documented_requests(attempts: int):
    provider = Counting(lambda _n: UNAVAILABLE)
    result = run(provider, attempts)
    assert result.status == "error" and result.error is not None
    assert result.error.code.endswith("PROVIDER_UNAVAILABLE")
    assert provider.requests == unavailable_requests(attempts)


def test_a_plan_that_stays_malformed_costs_exactly_the_documented_calls():
    provider = Counting(lambda _n: NOT_A_PLAN)
    result = run(provider, SHIPPED_ATTEMPTS, evaluate=False)  # no profile: the first call is the plan
    assert result.error is not None and result.error.code.endswith("MALFORMED_PLAN")
    assert provider.requests == malformed_calls()


def test_malformed_answers_each_after_a_failed_round_cost_exactly_the_worst_case():
    per_call = unavailable_requests(SHIPPED_ATTEMPTS)  # every request of a call fails but its very last one
    provider = Counting(lambda n: NOT_A_PLAN if n % per_call == 0 else UNAVAILABLE)
    result = run(provider, SHIPPED_ATTEMPTS, evaluate=False)
    assert result.error is not None and result.error.code.endswith("MALFORMED_PLAN")
    assert provider.requests == worst_requests(SHIPPED_ATTEMPTS)
