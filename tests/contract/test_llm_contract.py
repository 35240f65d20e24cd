"""One behavioural contract for every LLM adapter: OpenAI-compatible and Anthropic replay cassettes recorded over
real HTTP from llama.cpp's llama-server running Gemma 3 270M (a base model); ScriptedLLM answers from its script.

What the real model did, so nobody mistakes a permissive branch for a constrained one:
- Gemma 3 270M base never ends an unconstrained answer (its end-of-turn and <eos> tokens are practically never
  sampled), so every answer without a grammar runs to max_tokens and the adapters raise LLMTruncated.
- /v1/chat/completions honours the nested json_schema response_format: plan answers are grammar-constrained JSON
  that ends by itself.
- /v1/messages enforces neither a forced tool nor `output_config`, so Aeon's `anthropic-compatible` dialect (chosen
  for a non-Claude model on this wire format) sends neither: the answer is a text block, cut at max_tokens.
Re-record (docs/recording.md) against a hosted model and the same contract holds on its answers; the dialect is then
detected from the URL and model (native structured outputs for Claude).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from cassette_format import JsonTreeYamlSerializer, configure_vcr, unplayed
from vcr import VCR
from vcr.errors import CannotOverwriteExistingCassetteException

from aeon.adapters.llm.anthropic import AnthropicLLM
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.application.errors import LLMTruncated
from aeon.application.llm.jsonfix import parse_json
from aeon.application.ports import LLMPort
from aeon.domain.llm import Completion, Message

pytestmark = pytest.mark.block_network  # replay never touches the network; recording lifts this for vcr tests only

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string"},
        "steps": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {"tool": {"type": "string", "enum": ["calculator", "echo"]}, "input": {"type": "string"}},
                "required": ["tool", "input"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["goal", "steps"],
    "additionalProperties": False,
}
# Completion-style few-shot: a base model continues a pattern far better than it follows an instruction.
PLAN_PROMPT = (
    'Request: repeat hello\nPlan: {"goal": "repeat hello", "steps": [{"tool": "echo", "input": "hello"}]}\n\n'
    "Request: add 2 and 3\nPlan:"
)
BROKEN_PLAN = "{'goal': 'add 2 and 3', 'steps': ["
REPAIR_ASK = (
    "That JSON is invalid: Expecting property name enclosed in double quotes: line 1 column 2 (char 1). "
    "Answer with the corrected JSON only."
)
PLAIN_PROMPT = "The capital of France is Paris.\nThe capital of Italy is Rome.\nThe capital of Spain is"
COUNT_PROMPT = "Count from one to fifty in words, separated by commas:"
# The repair answer gets more room: the grammar lets the model fill steps up to maxItems (it did: three).
PLAIN_LIMIT, PLAN_LIMIT, REPAIR_LIMIT, TINY_LIMIT = 16, 96, 160, 4
VALID_PLAN = '{"goal": "add 2 and 3", "steps": [{"tool": "calculator", "input": "2 + 3"}]}'

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"


@dataclass(frozen=True)
class Endpoints:
    """Where a recording goes. Only used while recording: replay matches method, path and body, never the host."""

    openai_base_url: str
    anthropic_base_url: str
    model: str
    openai_key: str | None
    anthropic_key: str | None
    openai_dialect: str | None = None  # None: detected from the URL and model (a hosted provider)
    anthropic_dialect: str | None = None


@pytest.fixture(scope="session")
def endpoints() -> Endpoints:
    env = os.environ
    return Endpoints(
        openai_base_url=env.get("AEON_CONTRACT_OPENAI_BASE_URL", "http://127.0.0.1:8089/v1"),
        anthropic_base_url=env.get("AEON_CONTRACT_ANTHROPIC_BASE_URL", "http://127.0.0.1:8089"),
        model=env.get("AEON_CONTRACT_MODEL", "gemma-3-270m"),
        openai_key=env.get("OPENAI_API_KEY") or None,
        anthropic_key=env.get("ANTHROPIC_API_KEY") or None,
        # the default endpoints are llama.cpp's llama-server
        openai_dialect=None if "AEON_CONTRACT_OPENAI_BASE_URL" in env else "llamacpp",
        anthropic_dialect=None if "AEON_CONTRACT_ANTHROPIC_BASE_URL" in env else "anthropic-compatible",
    )


Factory = Callable[[Endpoints, Sequence[str]], LLMPort]
# Recording talks to a slow CPU server: a generous read timeout, and one attempt so a failure is recorded as it was.
FACTORIES: dict[str, Factory] = {
    "openai": lambda ep, _: OpenAICompatLLM(
        ep.openai_base_url, ep.model, ep.openai_key, dialect=ep.openai_dialect, read_timeout=300, max_attempts=1
    ),
    "anthropic": lambda ep, _: AnthropicLLM(
        ep.anthropic_base_url,
        ep.model,
        ep.anthropic_key,
        dialect=ep.anthropic_dialect,
        read_timeout=300,
        max_attempts=1,
    ),
    "scripted": lambda _, script: ScriptedLLM(script, source="contract script"),
}


@pytest.fixture(
    params=[
        pytest.param("openai", marks=pytest.mark.vcr),
        pytest.param("anthropic", marks=pytest.mark.vcr),
        pytest.param("scripted"),  # no HTTP, so no cassette
    ]
)
def adapter(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def ask(
    adapter: str,
    endpoints: Endpoints,
    messages: Sequence[Message],
    *,
    script: Sequence[str] = (),
    **options: Any,
) -> Completion | LLMTruncated:
    """One call through a fresh adapter, closed afterwards; a truncation is returned as a value, to be judged."""

    async def call() -> Completion | LLMTruncated:
        llm = FACTORIES[adapter](endpoints, script)
        try:
            return await llm.complete(messages, **options)
        except LLMTruncated as exc:
            return exc
        finally:
            await llm.aclose()

    return asyncio.run(call())


def completed(outcome: Completion | LLMTruncated, *, limit: int, may_truncate: bool) -> Completion | None:
    """The Completion, or None for an allowed truncation, which must name the limit and carry no partial answer."""
    if isinstance(outcome, LLMTruncated):
        assert may_truncate, f"unexpected truncation: {outcome}"
        assert f"max_tokens={limit}" in str(outcome)
        return None
    assert isinstance(outcome, Completion)
    assert outcome.text.strip(), "empty answer"
    assert outcome.finish_reason, "no finish information"
    assert outcome.model
    return outcome


def user(text: str) -> Message:
    return Message(role="user", content=text)


# -- the contract ---------------------------------------------------------------------------------------------------


def test_a_plain_completion_returns_text_with_finish_info_or_an_explicit_truncation(
    adapter: str, endpoints: Endpoints
) -> None:
    outcome = ask(adapter, endpoints, [user(PLAIN_PROMPT)], script=["Madrid."], max_tokens=PLAIN_LIMIT)
    # Recorded: both endpoints wrote "The capital of the United States is Washington.\nThe capital of the United
    # Kingdom" and hit max_tokens (finish_reason "length" / stop_reason "max_tokens"): the base model has no end of
    # turn. A hosted chat model answers "Madrid." and stops.
    completion = completed(outcome, limit=PLAIN_LIMIT, may_truncate=adapter != "scripted")
    if completion is not None:
        assert completion.finish_reason in ("stop", "end_turn")


def test_a_schema_constrained_completion_is_json_matching_the_schema(adapter: str, endpoints: Endpoints) -> None:
    outcome = ask(
        adapter,
        endpoints,
        [user(PLAN_PROMPT)],
        script=[VALID_PLAN],
        schema=SCHEMA,
        schema_name="plan",
        max_tokens=PLAN_LIMIT,
    )
    if adapter == "anthropic":
        # llama-server's /v1/messages gets the plain-text dialect (no schema on the wire). Recorded: a text block
        # continuing the few-shot pattern ('Request: add 2 and 3\nPlan: {"goal": "repeat hello", ...') until
        # max_tokens, so LLMTruncated. Claude answers with JSON under output_config. Either way Aeon's deterministic
        # repair decides whether that text holds an object.
        completion = completed(outcome, limit=PLAN_LIMIT, may_truncate=True)
        if completion is not None:
            repaired = parse_json(completion.text)
            assert repaired is None or isinstance(repaired.value, dict | list)
        return
    # Recorded (openai): {"goal": "add 2 and 3", "steps": [{"tool": "echo", "input": "hello"}]}, finish_reason
    # "stop". Valid under the schema, the step copied from the example: the grammar constrains the form, not the sense.
    completion = completed(outcome, limit=PLAN_LIMIT, may_truncate=False)
    assert completion is not None
    jsonschema.validate(json.loads(completion.text), SCHEMA)


def test_token_usage_is_reported_for_every_answer(adapter: str, endpoints: Endpoints) -> None:
    plan_request = {"schema": SCHEMA, "schema_name": "plan", "max_tokens": PLAN_LIMIT}
    outcome = ask(adapter, endpoints, [user(PLAN_PROMPT)], script=[VALID_PLAN], **plan_request)
    # Anthropic against llama-server is cut at max_tokens (see above), and LLMTruncated carries no usage.
    completion = completed(outcome, limit=PLAN_LIMIT, may_truncate=adapter == "anthropic")
    if completion is None:
        return
    usage = completion.usage
    floor = 1 if adapter == "scripted" else 2  # a real prompt and answer are more than one token each
    assert usage.prompt_tokens >= floor and usage.completion_tokens >= floor
    assert 0 <= usage.cached_tokens <= usage.prompt_tokens


def test_a_multi_turn_repair_exchange_gets_a_non_empty_answer(adapter: str, endpoints: Endpoints) -> None:
    messages = [user(PLAN_PROMPT), Message(role="assistant", content=BROKEN_PLAN), user(REPAIR_ASK)]
    # Aeon's supervisor sends its repair prompt with the schema again; so does this exchange.
    outcome = ask(
        adapter, endpoints, messages, script=[VALID_PLAN], schema=SCHEMA, schema_name="plan", max_tokens=REPAIR_LIMIT
    )
    # Recorded: openai, a valid plan padded to three echo steps; anthropic, the repair request echoed back in a loop
    # until max_tokens.
    completion = completed(outcome, limit=REPAIR_LIMIT, may_truncate=adapter == "anthropic")
    if completion is not None and adapter != "anthropic":
        jsonschema.validate(json.loads(completion.text), SCHEMA)


def test_an_answer_cut_at_max_tokens_raises_llm_truncated_not_a_partial_answer(
    adapter: str, endpoints: Endpoints
) -> None:
    if adapter == "scripted":
        pytest.skip("ScriptedLLM has no token limit")
    outcome = ask(adapter, endpoints, [user(COUNT_PROMPT)], max_tokens=TINY_LIMIT)
    assert isinstance(outcome, LLMTruncated), outcome
    assert f"max_tokens={TINY_LIMIT}" in str(outcome)


# -- the cassettes themselves ---------------------------------------------------------------------------------------

OPENAI_PLAN_CASSETTE = "test_a_schema_constrained_completion_is_json_matching_the_schema[openai].yaml"


def cassette_files() -> list[Path]:
    return sorted(CASSETTES.rglob("*.yaml"))


def open_recorded(vcr_config: dict[str, Any], name: str) -> Any:
    """A cassette opened by hand, replay-only, with the suite's configuration."""
    recorder = VCR(cassette_library_dir=str(CASSETTES / Path(__file__).stem), record_mode="none")
    configure_vcr(recorder)
    return recorder.use_cassette(name, **vcr_config)


def test_a_request_missing_from_the_cassette_fails_loudly(vcr_config: dict[str, Any], endpoints: Endpoints) -> None:
    missing = pytest.raises(CannotOverwriteExistingCassetteException, match="JSON bodies differ")
    with open_recorded(vcr_config, OPENAI_PLAN_CASSETTE), missing:
        ask("openai", endpoints, [user("a prompt that was never recorded")], schema=SCHEMA, max_tokens=PLAN_LIMIT)


def test_a_different_model_name_still_replays_the_recorded_answer(vcr_config: dict[str, Any]) -> None:
    other = Endpoints("http://replay.invalid/v1", "http://replay.invalid", "another-model", None, None, "llamacpp")
    with open_recorded(vcr_config, OPENAI_PLAN_CASSETTE) as cassette:
        outcome = ask("openai", other, [user(PLAN_PROMPT)], schema=SCHEMA, schema_name="plan", max_tokens=PLAN_LIMIT)
        assert isinstance(outcome, Completion)
        assert cassette.all_played


def test_a_cassette_with_unplayed_interactions_is_reported(vcr_config: dict[str, Any]) -> None:
    with open_recorded(vcr_config, OPENAI_PLAN_CASSETTE) as cassette:
        assert unplayed(cassette) == ["#1 POST /v1/chat/completions"]


def test_the_network_is_blocked_outside_recording(endpoints: Endpoints) -> None:
    # pytest-recording's socket guard raises RuntimeError; anyio wraps it in an ExceptionGroup. Nothing retries it.
    blocked = pytest.RaisesExc(RuntimeError, match="Network is disabled")
    with pytest.RaisesGroup(blocked, allow_unwrapped=True):
        ask("openai", endpoints, [user(PLAIN_PROMPT)], max_tokens=PLAIN_LIMIT)


def test_recorded_cassettes_hold_json_trees_and_no_credentials() -> None:
    files = cassette_files()
    assert len(files) >= 9, "cassettes missing: record them (docs/recording.md)"
    for path in files:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for interaction in data["interactions"]:
            request, response = interaction["request"], interaction["response"]
            assert set(request["body"]) == {"json"}, path  # a readable tree, not an escaped string
            assert set(response["body"]) == {"json"}, path
            sent = {name.lower() for name in request["headers"]}
            assert not sent & {"authorization", "x-api-key", "cookie"}, path
            assert {name.lower() for name in response["headers"]} <= {"content-type", "x-request-id", "request-id"}


def test_the_serializer_round_trips_json_and_raw_bodies() -> None:
    cassette = {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "http://x/v1/a",
                    "body": '{"b": [1, 2.5e-07, null]}',
                    "headers": {},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {},
                    "body": {"string": '{"text": "line one\\nline two  \\n", "n": "yes"}'},
                },
            },
            {
                "request": {"method": "GET", "uri": "http://x/health", "body": None, "headers": {}},
                "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "plain ok"}},
            },
        ],
    }
    text = JsonTreeYamlSerializer.serialize(cassette)
    back = JsonTreeYamlSerializer.deserialize(text)
    first, second = back["interactions"]
    assert json.loads(first["request"]["body"]) == {"b": [1, 2.5e-07, None]}
    assert json.loads(first["response"]["body"]["string"]) == {"text": "line one\nline two  \n", "n": "yes"}
    assert second["request"]["body"] is None
    assert second["response"]["body"] == {"string": "plain ok"}
    assert "json:" in text and '\\"' not in text
