"""A truncated answer still costs tokens: both HTTP adapters carry the response's usage on LLMTruncated, and a run's
budget counts it (application/llm/gateway.py record_failed_call), so the token cap sees every token the provider billed.

Response bodies come from `wire_rules`' builders, validated against the providers' published response schemas.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from wire_rules import anthropic_message_response, openai_chat_response

from aeon.adapters.llm.anthropic import AnthropicLLM
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.adapters.memory.inmemory import InMemoryKV
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.errors import LLMContextExceeded, LLMTruncated
from aeon.application.kernel.orchestrator import Orchestrator, RunSettings
from aeon.application.results import RunResult
from aeon.domain.llm import Message, Usage

from harness import SUM_STEP, FakeClock, ListLog, ListProgress, Provider, plan_json

pytestmark = pytest.mark.block_network
MESSAGES = [Message(role="user", content="Plan it")]
PLAN = plan_json(SUM_STEP)


def openai(provider: Provider) -> OpenAICompatLLM:
    return OpenAICompatLLM("https://api.openai.com/v1", "gpt-4.1", "sk-test", transport=httpx.MockTransport(provider))


def anthropic(provider: Provider) -> AnthropicLLM:
    transport = httpx.MockTransport(provider)
    return AnthropicLLM("https://api.anthropic.com", "claude-haiku-5-5", "sk-ant-test", transport=transport)


def truncation(llm: Any, **kw: Any) -> LLMTruncated:
    async def go() -> LLMTruncated:
        try:
            await llm.complete(MESSAGES, **kw)
        except LLMTruncated as exc:
            return exc
        finally:
            await llm.aclose()
        raise AssertionError("the answer was not truncated")

    return asyncio.run(go())


def openai_cut(prompt: int, completion: int, cached: int | None) -> httpx.Response:
    body = openai_chat_response(
        content='{"goal": "add 5 and 10", "steps": [{"step_id": "s1", "descr',
        finish_reason="length",
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=cached,
    )
    return httpx.Response(200, json=body)


def anthropic_answer(
    text: str, stop_reason: str, input_tokens: int, output_tokens: int, cache_read: int | None
) -> httpx.Response:
    body = anthropic_message_response(
        blocks=[{"type": "text", "text": text}],
        stop_reason=stop_reason,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_input_tokens=cache_read,
    )
    return httpx.Response(200, json=body)


# -- the adapters ---------------------------------------------------------------------------------------------------


def test_an_openai_answer_cut_at_the_token_limit_carries_the_usage_the_response_reported():
    caught = truncation(openai(Provider(openai_cut(321, 64, 256))), max_tokens=64)
    assert caught.usage == Usage(prompt_tokens=321, completion_tokens=64, cached_tokens=256)
    assert "max_tokens=64" in str(caught)


def test_an_anthropic_answer_cut_at_the_token_limit_carries_the_usage_including_cache_reads():
    cut = anthropic_answer('{"goal": "add 5', "max_tokens", input_tokens=21, output_tokens=64, cache_read=300)
    caught = truncation(anthropic(Provider(cut)), max_tokens=64)
    assert type(caught) is LLMTruncated
    # Anthropic's input_tokens leaves out cache reads; prompt_tokens is the whole prompt
    assert caught.usage == Usage(prompt_tokens=321, completion_tokens=64, cached_tokens=300)
    assert "max_tokens=64" in str(caught)


def test_an_anthropic_answer_cut_by_the_context_window_carries_its_usage():
    cut = anthropic_answer(
        "Let me", "model_context_window_exceeded", input_tokens=199_990, output_tokens=10, cache_read=None
    )
    caught = truncation(anthropic(Provider(cut)))
    assert type(caught) is LLMContextExceeded
    assert caught.usage == Usage(prompt_tokens=199_990, completion_tokens=10, cached_tokens=0)


def test_an_anthropic_turn_paused_then_cut_carries_the_usage_of_both_requests():
    provider = Provider(
        anthropic_answer('{"goal": ', "pause_turn", input_tokens=10, output_tokens=3, cache_read=40),
        anthropic_answer('"add 5', "max_tokens", input_tokens=14, output_tokens=61, cache_read=40),
    )
    caught = truncation(anthropic(provider), max_tokens=64)
    assert len(provider.bodies) == 2
    assert caught.usage == Usage(prompt_tokens=104, completion_tokens=64, cached_tokens=80)


# -- through the gateway: the run's budget ----------------------------------------------------------------------------

# (adapter factory, truncated answer costing 321 prompt / 64 completion / 256 cached tokens, a valid plan answer
# costing 40 / 20 / 0)
ADAPTERS: dict[str, tuple[Callable[[Provider], Any], httpx.Response, httpx.Response]] = {
    "openai": (
        openai,
        openai_cut(321, 64, 256),
        httpx.Response(200, json=openai_chat_response(content=PLAN, prompt_tokens=40, completion_tokens=20)),
    ),
    "anthropic": (
        anthropic,
        anthropic_answer('{"goal": "add 5', "max_tokens", input_tokens=65, output_tokens=64, cache_read=256),
        anthropic_answer(PLAN, "end_turn", input_tokens=40, output_tokens=20, cache_read=None),
    ),
}


def run_with(llm: Any, **settings: Any) -> tuple[RunResult, ListLog]:
    tools = ToolRegistry()
    register_builtins(tools)
    log = ListLog()
    orch = Orchestrator(
        llm=llm,
        tools=tools,
        memory=InMemoryKV(),
        logger=log,
        progress=ListProgress(),
        clock=FakeClock(),
        settings=RunSettings(evaluate=False, **settings),
    )

    async def go() -> RunResult:
        try:
            return await orch.run("calculate the sum of 5 and 10")
        finally:
            await llm.aclose()

    return asyncio.run(go()), log


@pytest.mark.parametrize("name", list(ADAPTERS))
def test_a_run_counts_the_tokens_of_a_truncated_answer_in_its_budget(name: str):
    factory, cut, plan = ADAPTERS[name]
    provider = Provider(cut, plan)  # the plan answer is cut off once; the phase contract asks again
    result, log = run_with(factory(provider))
    assert result.status == "completed" and result.outputs["s1"].output == 15
    assert len(provider.bodies) == 2
    b = result.budget
    assert (b.llm_calls, b.prompt_tokens, b.completion_tokens, b.cached_tokens) == (2, 361, 84, 256)
    stats = result.history.overall_statistics
    assert (stats.prompt_tokens, stats.completion_tokens, stats.cached_tokens) == (361, 84, 256)
    assert [f["error_code"] for e, f in log.events if e == "llm_error"] == ["AEON.LLM.TRUNCATED"]


@pytest.mark.parametrize("name", list(ADAPTERS))
def test_the_tokens_of_a_truncated_answer_alone_can_spend_the_token_cap(name: str):
    factory, cut, plan = ADAPTERS[name]
    # The cap fits the first call's worst case (its estimated prompt + max_tokens 64), read off the record of a run
    # whose cap is too small for any call. The cut-off answer then costs 321 + 64 = 385, and the retry's worst case
    # no longer fits: the retry is not sent.
    _, probe = run_with(factory(Provider(cut, plan)), max_tokens=1, llm_max_tokens=64)
    [blocked] = [f for e, f in probe.events if e == "llm_call_not_sent"]
    cap = blocked["worst_case"]["prompt_tokens"] + 64
    provider = Provider(cut, plan)
    result, _ = run_with(factory(provider), max_tokens=cap, llm_max_tokens=64)
    assert result.status == "ttl_expired" and result.ttl_expiration is not None
    assert result.ttl_expiration.cap == "max_tokens"
    assert len(provider.bodies) == 1  # the retry is never sent
    assert (result.budget.prompt_tokens, result.budget.completion_tokens) == (321, 64)
