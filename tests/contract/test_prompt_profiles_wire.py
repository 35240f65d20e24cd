"""What a simple request sends over the wire in each prompt profile: "calculate the sum of 5 and 10" through the
OpenAI adapter against a local OpenAI-compatible server that answers each kind of call correctly.

Characters are counted as the bodies hold them (the messages and the `response_format`, JSON-encoded): the chat
profile sends no worked examples and the answer's schema once, so its two calls are a fraction of the base profile's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_provider import FakeProvider, serving
from typer.testing import CliRunner

from aeon.entrypoints.cli import app

REQUEST = "calculate the sum of 5 and 10"
ANSWERS = {
    "profile_and_plan": json.dumps(
        {
            "profile": {
                "reasoning_depth": 1,
                "information_sufficiency": 1.0,
                "expected_tool_usage": "minimal",
                "output_breadth": "narrow",
                "confidence_requirement": "low",
                "raw_inference": "one sum",
            },
            "plan": {
                "goal": REQUEST,
                "steps": [
                    {
                        "step_id": "s1",
                        "description": "Add 5 and 10",
                        "tool": "calculator",
                        "args": {"expression": "5 + 10"},
                    }
                ],
            },
        }
    ),
    "evaluation": json.dumps(
        {"completeness_score": 1.0, "coherence_score": 1.0, "consistent": True, "explanation": "15.", "issues": []}
    ),
}
# What one call of the chat profile may send on this request (messages and schema, as JSON): measured 1,706 and
# 1,530 with the plain json_schema of an unknown server (model "fake"); pydantic-ai sends about 500 a call.
CHAT_CALL_MAX = 1_750


class Recording(FakeProvider):
    def __init__(self) -> None:
        super().__init__(kinds=ANSWERS)
        self.bodies: list[dict[str, Any]] = []

    def answer_for(self, body: bytes) -> str:
        self.bodies.append(json.loads(body))
        return super().answer_for(body)


def sent(body: dict[str, Any]) -> tuple[int, int]:
    """(characters of the messages, of the response_format), JSON-encoded as the adapter sends them."""
    size = lambda value: len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))  # noqa: E731
    return size(body["messages"]), size(body.get("response_format") or {})


def fields(schema: Any) -> set[str]:
    """The property names of a schema, at any depth, that read as field names (`reasoning_depth`, `step_id` …)."""
    if isinstance(schema, list):
        return set().union(*(fields(s) for s in schema))
    if not isinstance(schema, dict):
        return set()
    own = {name for name in schema.get("properties") or {} if "_" in name}
    return own.union(*(fields(v) for v in schema.values()))


def run_with(profile: str, model: str, tmp_path: Path) -> list[dict[str, Any]]:
    with serving(Recording()) as provider:
        llm = {"adapter": "openai", "base_url": provider.url, "model": model, "api_key": "k", "profile": profile}
        config = tmp_path / f"{profile}.yaml"
        config.write_text(yaml.safe_dump({"llm": llm, "log": {"path": str(tmp_path / f"{profile}.jsonl")}}))
        result = CliRunner().invoke(app, ["run", REQUEST, "--config", str(config), "--json", "-q"])
        doc = json.loads(result.stdout)
        assert doc["status"] == "completed" and str(doc["answer"]) == "15", (result.exit_code, doc.get("error"))
        return provider.bodies


@pytest.fixture(autouse=True)
def _no_model_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for var in ("AEON_LLM_ADAPTER", "AEON_LLM_BASE_URL", "AEON_LLM_MODEL", "AEON_LLM_DIALECT", "AEON_LLM_PROFILE"):
        monkeypatch.delenv(var, raising=False)


def test_a_chat_model_gets_the_same_two_calls_in_a_fraction_of_the_characters(tmp_path: Path) -> None:
    base, chat = run_with("base", "fake", tmp_path), run_with("chat", "fake", tmp_path)
    names = [[b["response_format"]["json_schema"]["name"] for b in bodies] for bodies in (base, chat)]
    assert names == [["profile_and_plan", "evaluation"]] * 2
    chat_calls = [sum(sent(b)) for b in chat]
    assert all(n <= CHAT_CALL_MAX for n in chat_calls), chat_calls
    assert sum(sum(sent(b)) for b in base) >= 3.5 * sum(chat_calls)


@pytest.mark.parametrize("model", ["fake", "gpt-4.1-mini"])  # plain json_schema; OpenAI's strict form
def test_a_chat_call_carries_its_schema_once_in_response_format_and_never_in_its_messages(
    model: str, tmp_path: Path
) -> None:
    for body in run_with("chat", model, tmp_path):
        schema = body["response_format"]["json_schema"]["schema"]
        text = json.dumps(body["messages"])
        assert not fields(schema) & set(text.replace('"', " ").split()), text  # no field list in prose
        assert "title" not in json.dumps(schema) and "minLength" not in json.dumps(schema)
        assert body["messages"][0]["role"] == "system" and "example" not in text and "stop" not in body
