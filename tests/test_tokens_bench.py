"""bench/tokens.py: its recording fake server answers Aeon, LangGraph's plan-and-execute and a pydantic-ai agent
correctly (each run ends with the right answer), and the bench counts each one's LLM calls and what it sends."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from fake_provider import json_server

import tokens
from helpers import tokens_peers, tokens_server

SIMPLE, TWO_STEPS = tokens.SCENARIOS[0], tokens.SCENARIOS[2]


def _runner(framework: str) -> tokens.Runner:
    absent = tokens_peers.missing(framework) if framework in tokens_peers.PEERS else []
    if absent:
        pytest.skip(f"needs the [bench] extra: {', '.join(absent)}")
    return tokens.runners(lambda line: None)[framework]


@pytest.mark.parametrize(
    ("framework", "request_", "kinds"),
    [
        ("aeon-base", SIMPLE, ["profile_and_plan", "evaluation"]),
        ("aeon-base", TWO_STEPS, ["profile_and_plan", "step", "evaluation"]),
        ("langgraph", SIMPLE, ["planner", "executor", "executor", "replanner"]),
        ("langgraph", TWO_STEPS, ["planner", "executor", "executor", "replanner", "executor", "replanner"]),
        ("pydantic-ai", SIMPLE, ["agent", "agent"]),
        ("pydantic-ai", TWO_STEPS, ["agent", "agent"]),
    ],
    ids=[
        "aeon-simple",
        "aeon-two-steps",
        "langgraph-simple",
        "langgraph-two-steps",
        "pydantic-ai-simple",
        "pydantic-ai-two-steps",
    ],
)
def test_each_framework_gets_the_right_answer_and_its_calls_are_counted(
    framework: str, request_: tokens.Scenario, kinds: list[str]
) -> None:
    rows = tokens.measure((request_,), {framework: _runner(framework)}, tokens.Sizer(None))
    (row,) = rows
    assert [kind for kind, _, _ in row.calls] == kinds
    assert "15" in row.answer  # 5 + 10, from the calculator (Aeon answers with the last step's output)
    assert all(prompt > 0 and completion > 0 for _, prompt, completion in row.calls)


def test_the_prompt_counted_is_the_messages_the_tool_definitions_and_the_schema() -> None:
    tool = {"type": "function", "function": {"name": "calculator", "parameters": {"type": "object"}}}
    schema = {"type": "json_schema", "json_schema": {"name": "Plan", "schema": {"type": "object"}}}
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "add 2 and 3"}]
    bare = tokens.prompt_text({"messages": messages})
    full = tokens.prompt_text({"messages": messages, "tools": [tool], "response_format": schema})
    assert "Be brief." in bare and "add 2 and 3" in bare
    assert len(full) == len(bare) + 2 + len(json.dumps([tool])) + len(json.dumps(schema))


def test_a_tool_call_answer_counts_as_completion() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "calculator", "arguments": '{"expression": "2 + 3"}'}}
    assert "2 + 3" in tokens.completion_text({"role": "assistant", "content": None, "tool_calls": [call]})


@pytest.fixture
def word_tokenizer() -> Iterator[str]:
    """A stand-in for llama-server's /tokenize: one token per word."""

    def tokenize(path: str, body: bytes) -> tuple[int, bytes]:
        return 200, json.dumps({"tokens": list(range(len(json.loads(body)["content"].split())))}).encode()

    with json_server(tokenize) as url:
        yield url


def test_with_a_tokenize_url_sizes_are_that_tokenizers_tokens_and_the_report_says_so(word_tokenizer: str) -> None:
    size = tokens.Sizer(word_tokenizer)
    assert size("calculate the sum of 5 and 10") == 7
    assert "tokenizer" in size.unit and word_tokenizer in size.unit
    assert tokens.Sizer(None)("calculate") == 9
    assert "characters" in tokens.Sizer(None).unit


def test_the_report_gives_each_frameworks_ratio_to_pydantic_ai() -> None:
    rows = [
        tokens.Row("aeon-base", "r1", [("profile_and_plan", 600, 10), ("evaluation", 400, 5)], "15"),
        tokens.Row("pydantic-ai", "r1", [("agent", 50, 3), ("agent", 50, 3)], "15"),
        tokens.Row("aeon-base", "r2", [("profile_and_plan", 1000, 10)], "42"),
        tokens.Row("pydantic-ai", "r2", [("agent", 400, 3)], "42"),
    ]
    assert tokens.ratios(rows) == {"aeon-base": (10.0, 4.0)}
    lines: list[str] = []
    tokens.report(rows, "characters", False, lines.append)
    assert lines[-1] == "prompt aeon (base profile) / pydantic-ai: 10.0x on 'r1', 4.0x in all"


def test_the_fake_server_refuses_a_request_it_cannot_tell_apart_rather_than_guess() -> None:
    with tokens_server.serving() as server:
        server.scenario = SIMPLE
        body = {"model": tokens.MODEL, "messages": [{"role": "user", "content": SIMPLE.request}]}
        reply = httpx.post(f"{server.url}/chat/completions", json=body, trust_env=False)
        assert reply.status_code == 400 and "unknown shape" in reply.json()["error"]["message"]
        assert server.take() == []
