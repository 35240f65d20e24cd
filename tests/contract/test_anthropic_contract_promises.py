"""What test_llm_contract.py's names promise, checked for the Anthropic adapter.

Its Anthropic cassettes were recorded from llama-server, whose /v1/messages enforces no schema: every recorded
answer ran to max_tokens, and the contract tests accept that truncation and then assert nothing about the promise in
their names (JSON matching the schema, token usage for every answer, a non-empty repair answer). Here:
- the recorded cassettes are replayed (read-only) to check what the truncations do carry: the usage the response
  reported, cache reads included;
- provider-shaped Anthropic answers (built by `wire_rules`, validated against the published response schema) check
  each promise on the paths a hosted Claude takes: native structured outputs (`output_config`), the forced tool of
  the `anthropic-tool` dialect, and plain text for `anthropic-compatible` servers.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml
from cassette_format import configure_vcr
from test_llm_contract import (
    BROKEN_PLAN,
    CASSETTES,
    COUNT_PROMPT,
    PLAIN_LIMIT,
    PLAIN_PROMPT,
    PLAN_LIMIT,
    PLAN_PROMPT,
    REPAIR_ASK,
    REPAIR_LIMIT,
    SCHEMA,
    TINY_LIMIT,
    VALID_PLAN,
    Endpoints,
    ask,
    user,
)
from vcr import VCR
from wire_rules import anthropic_message_response, anthropic_request_problems

from aeon.adapters.llm.anthropic import AnthropicLLM
from aeon.application.errors import LLMTruncated
from aeon.domain.llm import Completion, Message, Usage

from harness import Provider

pytestmark = pytest.mark.block_network

RECORDED = CASSETTES / "test_llm_contract"
REPLAY = Endpoints(
    "http://replay.invalid/v1", "http://replay.invalid", "gemma-3-270m", None, None, "llamacpp", "anthropic-compatible"
)
REPAIR_EXCHANGE = [user(PLAN_PROMPT), Message(role="assistant", content=BROKEN_PLAN), user(REPAIR_ASK)]
PLAN_ANSWER = json.loads(VALID_PLAN)


# -- the recorded answers, replayed ---------------------------------------------------------------------------------

# (cassette of a contract test, the messages and options that test sends); replay matches them against the recording
RECORDED_CALLS = {
    "test_a_plain_completion_returns_text_with_finish_info_or_an_explicit_truncation": (
        [user(PLAIN_PROMPT)],
        {"max_tokens": PLAIN_LIMIT},
    ),
    "test_a_schema_constrained_completion_is_json_matching_the_schema": (
        [user(PLAN_PROMPT)],
        {"schema": SCHEMA, "schema_name": "plan", "max_tokens": PLAN_LIMIT},
    ),
    "test_token_usage_is_reported_for_every_answer": (
        [user(PLAN_PROMPT)],
        {"schema": SCHEMA, "schema_name": "plan", "max_tokens": PLAN_LIMIT},
    ),
    "test_a_multi_turn_repair_exchange_gets_a_non_empty_answer": (
        REPAIR_EXCHANGE,
        {"schema": SCHEMA, "schema_name": "plan", "max_tokens": REPAIR_LIMIT},
    ),
    "test_an_answer_cut_at_max_tokens_raises_llm_truncated_not_a_partial_answer": (
        [user(COUNT_PROMPT)],
        {"max_tokens": TINY_LIMIT},
    ),
}


def recorded_usage(path: Path) -> Usage:
    """The usage the recorded response reported, as Aeon counts it (prompt = input + cache reads + cache writes)."""
    [interaction] = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    usage = interaction["response"]["body"]["json"]["usage"]
    cached = usage.get("cache_read_input_tokens") or 0
    prompt = usage["input_tokens"] + cached + (usage.get("cache_creation_input_tokens") or 0)
    return Usage(prompt_tokens=prompt, completion_tokens=usage["output_tokens"], cached_tokens=cached)


@pytest.mark.parametrize("test_name", list(RECORDED_CALLS))
def test_every_recorded_anthropic_answer_reports_the_token_usage_of_its_response(
    test_name: str, vcr_config: dict[str, Any]
) -> None:
    path = RECORDED / f"{test_name}[anthropic].yaml"
    messages, options = RECORDED_CALLS[test_name]
    recorder = VCR(cassette_library_dir=str(RECORDED), record_mode="none")
    configure_vcr(recorder)
    with recorder.use_cassette(path.name, **vcr_config) as cassette:
        outcome = ask("anthropic", REPLAY, messages, **options)
        assert cassette.all_played
    # A truncation (what llama-server's answers were) carries the usage as a completed answer does.
    assert isinstance(outcome, Completion | LLMTruncated)
    expected = recorded_usage(path)
    assert outcome.usage == expected
    assert expected.prompt_tokens >= 2 and expected.completion_tokens >= 2  # real prompts and answers
    assert 0 <= expected.cached_tokens <= expected.prompt_tokens  # (recorded: llama-server's prompt-cache reads)


# -- provider-shaped answers ------------------------------------------------------------------------------------------


def claude(provider: Provider, dialect: str | None = None) -> AnthropicLLM:
    """Claude at Anthropic's URL (the `anthropic` dialect: native structured outputs) unless another dialect is
    named; `anthropic-compatible` is a local llama-server serving another model."""
    transport = httpx.MockTransport(provider)
    if dialect == "anthropic-compatible":
        return AnthropicLLM("http://127.0.0.1:8080", "gemma-3-270m", dialect=dialect, transport=transport)
    return AnthropicLLM(
        "https://api.anthropic.com", "claude-sonnet-5-5", "sk-ant-test", dialect=dialect, transport=transport
    )


def answer(*blocks: dict[str, Any], stop_reason: str = "end_turn", **usage: int) -> httpx.Response:
    return httpx.Response(200, json=anthropic_message_response(blocks=list(blocks), stop_reason=stop_reason, **usage))


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(value: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_01", "name": "plan", "input": value}


def complete(llm: AnthropicLLM, messages: list[Message], **options: Any) -> Completion:
    async def go() -> Completion:
        try:
            return await llm.complete(messages, **options)
        finally:
            await llm.aclose()

    return asyncio.run(go())


def assert_contract_answer(completion: Completion) -> None:
    """What test_llm_contract's `completed()` asks of every answer: text, finish information, a model."""
    assert completion.text.strip() and completion.finish_reason and completion.model


PLAN_REQUEST = {"schema": SCHEMA, "schema_name": "plan", "max_tokens": PLAN_LIMIT}


def test_a_schema_constrained_anthropic_answer_under_output_config_is_json_matching_the_schema() -> None:
    provider = Provider(answer(text(VALID_PLAN)))
    completion = complete(claude(provider), [user(PLAN_PROMPT)], **PLAN_REQUEST)
    [body] = provider.bodies
    assert body["output_config"]["format"]["type"] == "json_schema" and "tools" not in body
    assert anthropic_request_problems(body) == []  # a request Anthropic accepts
    assert_contract_answer(completion)
    jsonschema.validate(json.loads(completion.text), SCHEMA)
    assert json.loads(completion.text) == PLAN_ANSWER


def test_a_schema_constrained_answer_as_a_forced_tool_call_is_json_matching_the_schema() -> None:
    provider = Provider(answer(tool_use(PLAN_ANSWER), stop_reason="tool_use"))
    completion = complete(claude(provider, "anthropic-tool"), [user(PLAN_PROMPT)], **PLAN_REQUEST)
    [body] = provider.bodies
    assert body["tool_choice"] == {"type": "tool", "name": "plan"} and body["tools"][0]["input_schema"] == SCHEMA
    assert anthropic_request_problems(body) == []
    assert_contract_answer(completion)
    jsonschema.validate(json.loads(completion.text), SCHEMA)
    assert json.loads(completion.text) == PLAN_ANSWER


USAGE = {"input_tokens": 7, "output_tokens": 33, "cache_read_input_tokens": 120}
COUNTED = Usage(prompt_tokens=127, completion_tokens=33, cached_tokens=120)  # prompt = input + cache reads


@pytest.mark.parametrize(
    ("dialect", "options", "responses"),
    [
        pytest.param(None, {}, [answer(text("Madrid."), **USAGE)], id="plain-text"),
        pytest.param(None, PLAN_REQUEST, [answer(text(VALID_PLAN), **USAGE)], id="output-config"),
        pytest.param(
            "anthropic-tool",
            PLAN_REQUEST,
            [answer(tool_use(PLAN_ANSWER), stop_reason="tool_use", **USAGE)],
            id="forced-tool",
        ),
        pytest.param(
            None,
            {"stop": ["\nRequest:"]},
            [answer(text("Madrid."), stop_reason="stop_sequence", **USAGE)],
            id="stop-sequence",
        ),
        pytest.param(
            None,
            PLAN_REQUEST,
            [
                answer(text(VALID_PLAN[:20]), stop_reason="pause_turn", input_tokens=3, output_tokens=13,
                       cache_read_input_tokens=60),
                answer(text(VALID_PLAN[20:]), input_tokens=4, output_tokens=20, cache_read_input_tokens=60),
            ],
            id="paused-and-resumed",
        ),
    ],
)  # fmt: skip
def test_token_usage_is_reported_for_every_anthropic_answer_including_cache_reads(
    dialect: str | None, options: dict[str, Any], responses: list[httpx.Response]
) -> None:
    completion = complete(claude(Provider(*responses), dialect), [user(PLAIN_PROMPT)], **options)
    assert_contract_answer(completion)
    assert completion.usage == COUNTED


def test_token_usage_is_reported_for_an_anthropic_answer_cut_at_max_tokens() -> None:
    llm = claude(Provider(answer(text('{"goal": "add 2'), stop_reason="max_tokens", **USAGE)))
    with pytest.raises(LLMTruncated, match=f"max_tokens={PLAN_LIMIT}") as caught:
        complete(llm, [user(PLAN_PROMPT)], **PLAN_REQUEST)
    assert caught.value.usage == COUNTED


@pytest.mark.parametrize(
    ("dialect", "reply"),
    [
        pytest.param(None, answer(text(VALID_PLAN)), id="output-config"),
        pytest.param("anthropic-tool", answer(tool_use(PLAN_ANSWER), stop_reason="tool_use"), id="forced-tool"),
        pytest.param("anthropic-compatible", answer(text(f"Plan: {VALID_PLAN}")), id="plain-text-server"),
    ],
)
def test_a_multi_turn_anthropic_repair_exchange_gets_a_non_empty_answer(dialect: str | None, reply: httpx.Response):
    provider = Provider(reply)
    completion = complete(claude(provider, dialect), REPAIR_EXCHANGE, **{**PLAN_REQUEST, "max_tokens": REPAIR_LIMIT})
    [body] = provider.bodies
    # the exchange goes out as it happened: the model's broken answer as its own turn, then the repair request
    assert body["messages"] == [
        {"role": "user", "content": PLAN_PROMPT},
        {"role": "assistant", "content": BROKEN_PLAN},
        {"role": "user", "content": REPAIR_ASK},
    ]
    assert_contract_answer(completion)
    if dialect != "anthropic-compatible":  # Anthropic's API, with a schema on the wire: the answer is the plan itself
        assert anthropic_request_problems(body) == []
        jsonschema.validate(json.loads(completion.text), SCHEMA)
