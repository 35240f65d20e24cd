"""Every request body Aeon sends, in every dialect, checked against the providers' published contracts (wire/).

A whole two-pass `aeon run` goes through the CLI to a fake provider (respx, no network). The run is scripted so that
it sends every prompt kind of a run: profile and plan, step repair, evaluation, JSON repair, refinement, reasoning
step (the profile alone and the plan alone are asked only on a re-profiling pass and without evaluation; their schemas
are the two halves of the first). The fake provider checks each body with `wire_rules` and answers the way that
provider would: under a strict or native structured-output schema, the scripted answer is put into the schema's wire
form (free-form objects as JSON text, absent optional fields as null) and validated against that schema, as the
provider guarantees.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import respx
from typer.testing import CliRunner
from wire_rules import (
    anthropic_message_response,
    anthropic_output_schema_problems,
    anthropic_request_problems,
    openai_chat_response,
    openai_request_problems,
)

from aeon.adapters.llm.dialects import DIALECTS
from aeon.entrypoints.cli import app

CONFIG = Path(__file__).resolve().parents[2] / "config"
REQUEST = "calculate the sum of 5 and 10"
STEP = {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator"}
PROFILE = {
    "reasoning_depth": 3,
    "information_sufficiency": 0.6,
    "expected_tool_usage": "minimal",
    "output_breadth": "moderate",
    "confidence_requirement": "medium",
    "raw_inference": "a sum, then stating it",
}


def verdict(ok: bool, explanation: str) -> dict[str, Any]:
    """The one evaluation answer of a pass: no issues, and the convergence judgement."""
    score = 1.0 if ok else 0.4
    return {
        "issues": [],
        "completeness_score": score,
        "coherence_score": 1.0 if ok else 0.9,
        "consistent": True,
        "explanation": explanation,
    }


# (prompt kind, answer): the scripted model's side of the run, in call order.
SCRIPT: list[tuple[str, Any]] = [
    # the profile and the plan in one answer; the plan's step has a wrong argument name
    (
        "profile_and_plan",
        {"profile": PROFILE, "plan": {"steps": [{**STEP, "args": {"expr": "5 + 10"}}]}},
    ),
    ("repair_step", {**STEP, "args": {"expression": "5 + 10"}}),
    ("evaluate", verdict(False, "")),  # an empty explanation: the supervisor asks for a JSON repair
    ("repair_json", verdict(False, "the sum is computed but never stated")),
    (
        "refine",
        {
            "actions": [
                {
                    "action_type": "ADD",
                    "target_step_id": "",
                    "new_step": {"step_id": "s2", "description": "State the sum from s1", "agent": "llm"},
                    "substeps": [],
                    "justification": "the answer must be stated",
                }
            ]
        },
    ),
    ("step", {"answer": "The sum of 5 and 10 is 15.", "clarity_state": "CLEAR", "handoff_to_next": "15"}),
    ("evaluate", verdict(True, "the sum is computed and stated")),
]
PROMPT_KINDS = {"profile_and_plan", "step", "evaluate", "refine", "repair_json", "repair_step"}


def wire_value(value: Any, schema: Mapping[str, Any]) -> Any:
    """`value` as a provider constrained by `schema` returns it: objects the schema types as strings become JSON
    text, and properties the schema requires but the value lacks come back as null."""
    types = schema.get("type")
    kinds = {types} if isinstance(types, str) else set(types or [])
    if isinstance(value, dict) and "object" not in kinds and "string" in kinds:
        return json.dumps(value)
    if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        props = schema["properties"]
        out = {k: wire_value(v, props[k]) if k in props else v for k, v in value.items()}
        for key in schema.get("required") or []:
            out.setdefault(key, None)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [wire_value(v, schema["items"]) for v in value]
    return value


def sent_schema(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"].get("schema")
    config = (body.get("output_config") or {}).get("format")
    if config:
        return config["schema"]
    tools = body.get("tools")
    return tools[0]["input_schema"] if tools else None


@dataclass
class FakeProvider:
    """Answers the script through one wire format and checks every request body it receives."""

    wire: str
    dialect: str
    model: str
    thinking: bool = False
    refuse_once: dict[str, Any] | None = None  # an error body answered (HTTP 400) to the first request
    strict_schemas: bool = False  # answer a structured-output schema the API refuses with its 400, as it does
    bodies: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if self.refuse_once is not None:
            refusal, self.refuse_once = self.refuse_once, None
            return httpx.Response(400, json=refusal)
        if self.strict_schemas and (refusal := self.schema_refusal(body)) is not None:
            self.refused.append(refusal)
            error = {"type": "invalid_request_error", "message": refusal}
            return httpx.Response(400, json={"type": "error", "error": error})
        self.bodies.append(body)
        n = len(self.bodies)
        self.problems += [f"request {n} ({SCRIPT[n - 1][0]}): {p}" for p in self.check(body)]
        answer = SCRIPT[n - 1][1]
        schema = sent_schema(body)
        if schema is not None:
            answer = wire_value(answer, schema)
            strict = (body.get("response_format") or {}).get("json_schema", {}).get("strict") or "output_config" in body
            if strict:
                jsonschema.validate(answer, schema)  # what strict / native structured outputs guarantee
        text = json.dumps(answer)
        if self.wire == "openai":
            return httpx.Response(200, json=openai_chat_response(content=text, model=self.model))
        if "tool_choice" in body:
            blocks = [{"type": "tool_use", "id": f"toolu_{n}", "name": body["tools"][0]["name"], "input": answer}]
        else:
            blocks = [{"type": "text", "text": text}]
        if self.thinking:
            blocks.insert(0, {"type": "thinking", "thinking": "Let me see.", "signature": "sig"})
        return httpx.Response(200, json=anthropic_message_response(blocks=blocks, model=self.model))

    @staticmethod
    def schema_refusal(body: Mapping[str, Any]) -> str | None:
        """Anthropic's 400 for a structured-output schema its grammar compiler refuses, else None."""
        schema = ((body.get("output_config") or {}).get("format") or {}).get("schema")
        problems = anthropic_output_schema_problems(schema) if schema is not None else []
        if not problems:
            return None
        where, _, what = problems[0].partition(": ")
        keyword = what.split(" ")[0]
        return f"output_config.format.schema: For '{where}', property '{keyword}' is not supported"

    def check(self, body: dict[str, Any]) -> list[str]:
        hosted = self.dialect in ("openai-chat", "openai-reasoning", "anthropic", "anthropic-thinking")
        if self.wire == "openai":
            return openai_request_problems(body, model=self.model, hosted=hosted)
        if not hosted and body.get("temperature") is not None:
            # Non-Anthropic servers take the sampling parameters the 2023-06-01 API version types (wire/README.md).
            assert 0 <= body["temperature"] <= 1
            body = {k: v for k, v in body.items() if k != "temperature"}
        return anthropic_request_problems(body, thinking_model=self.thinking)


@dataclass
class CliOutcome:
    exit_code: int
    doc: dict[str, Any]
    stderr: str
    records: list[dict[str, Any]]


@pytest.fixture
def run_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.chdir(tmp_path)
    for var in ("AEON_LLM_ADAPTER", "AEON_LLM_BASE_URL", "AEON_LLM_MODEL", "AEON_LLM_DIALECT"):
        monkeypatch.delenv(var, raising=False)

    def go(provider: FakeProvider, config: Path, url: str, env: Mapping[str, str]) -> CliOutcome:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        log = tmp_path / "run.jsonl"
        with respx.mock(assert_all_called=True) as router:
            router.post(url).mock(side_effect=provider)
            result = CliRunner().invoke(
                app, ["run", REQUEST, "--config", str(config), "--json", "--log-file", str(log)]
            )
        assert result.stdout.strip(), (result.exit_code, result.stderr, result.exception)
        records = [json.loads(line) for line in log.read_text().splitlines()]
        return CliOutcome(result.exit_code, json.loads(result.stdout), result.stderr, records)

    yield go


OPENAI_URL = "https://api.openai.com/v1/chat/completions"
ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
HOSTED = [
    pytest.param("openai", "gpt-4.1-mini", "openai-chat", {}, id="openai.yaml-chat-model"),
    pytest.param("openai", "gpt-5.4-mini", "openai-reasoning", {}, id="openai.yaml-reasoning-model"),
    pytest.param("anthropic", "claude-haiku-5-5", "anthropic", {}, id="anthropic.yaml-current-model"),
    pytest.param(
        "anthropic",
        "claude-opus-5-5",
        "anthropic-thinking",
        {"AEON_LLM_DIALECT": "anthropic-thinking"},
        id="anthropic.yaml-thinking-model",
    ),
]


@pytest.mark.block_network
@pytest.mark.parametrize(("wire", "model", "dialect", "env"), HOSTED)
def test_every_request_of_a_whole_run_through_the_shipped_config_is_one_the_provider_accepts(
    run_through: Any, wire: str, model: str, dialect: str, env: dict[str, str]
) -> None:
    key = "OPENAI_API_KEY" if wire == "openai" else "ANTHROPIC_API_KEY"
    provider = FakeProvider(wire, dialect, model, thinking=dialect == "anthropic-thinking")
    url = OPENAI_URL if wire == "openai" else ANTHROPIC_URL
    run = run_through(provider, CONFIG / f"{wire}.yaml", url, {key: "sk-test-key", "AEON_LLM_MODEL": model, **env})
    assert run.exit_code == 0, (run.stderr, run.doc.get("error"))
    assert provider.problems == []
    assert len(provider.bodies) == len(SCRIPT)  # every prompt kind was sent, each once as scripted
    assert {kind for kind, _ in SCRIPT} == PROMPT_KINDS
    assert run.doc["passes"] == 2 and run.doc["converged"] is True
    assert run.doc["outputs"]["s1"]["output"] == 15 and "15" in run.doc["outputs"]["s2"]["output"]
    start = next(r for r in run.records if r["event"] == "run_start")
    assert start["llm"]["dialect"] == dialect and start["llm"]["model"] == model
    assert f"dialect {dialect}" in run.stderr.splitlines()[0]  # the first progress line says what is spoken


@pytest.mark.block_network
@pytest.mark.parametrize("profile", ["base", "chat"])
@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_every_prompt_kind_in_every_dialect_validates_against_the_published_request_schema(
    run_through: Any, tmp_path: Path, dialect: str, profile: str
) -> None:
    wire = DIALECTS[dialect].wire
    model = {"openai-reasoning": "o3", "openai-chat": "gpt-4.1"}.get(dialect, "some-model")
    if wire == "anthropic":
        model = "claude-sonnet-5-5" if dialect.startswith("anthropic") and dialect != "anthropic-compatible" else model
    base = "https://api.openai.com/v1" if wire == "openai" else "https://api.anthropic.com"
    config = tmp_path / "c.yaml"
    config.write_text(
        json.dumps(
            {
                "llm": {
                    "adapter": wire,
                    "base_url": base,
                    "model": model,
                    "dialect": dialect,
                    "max_tokens": 900,
                    "profile": profile,
                }
            }
        ),
        encoding="utf-8",
    )
    provider = FakeProvider(wire, dialect, model, thinking=DIALECTS[dialect].thinking)
    key = {"OPENAI_API_KEY" if wire == "openai" else "ANTHROPIC_API_KEY": "sk-test-key"}
    run = run_through(provider, config, OPENAI_URL if wire == "openai" else ANTHROPIC_URL, key)
    assert run.exit_code == 0, (run.stderr, run.doc.get("error"))
    assert provider.problems == []
    assert len(provider.bodies) == len(SCRIPT)
    # a dialect that sends no schema keeps the base prompts (their examples show the answer's shape)
    assert_one_cacheable_prefix(provider.bodies, "base" if DIALECTS[dialect].structured == "none" else profile)


def assert_one_cacheable_prefix(bodies: list[dict[str, Any]], profile: str = "base") -> None:
    """Every request opens with the same static text (instructions, tool schemas, examples of every prompt kind)
    and puts what changes after it; on Anthropic that text is one system block marked for the prompt cache."""
    if "messages" in bodies[0] and "system" not in bodies[0]:  # OpenAI: the first message; cached automatically
        heads = {json.dumps(b["messages"][0]) for b in bodies}
        assert all(b["messages"][0]["role"] == "system" and len(b["messages"]) == 2 for b in bodies)
    else:
        heads = {json.dumps(b["system"]) for b in bodies}
        [block] = bodies[0]["system"]
        assert block["cache_control"] == {"type": "ephemeral"} and block["type"] == "text"
        assert all(len(b["messages"]) == 1 for b in bodies)  # the per-call part is the one user turn after it
    (head,) = heads
    if profile == "base":  # the guides and worked examples of the kinds every pass asks for
        assert "calculator" in head and "## Profile and plan" in head and "## Evaluate" in head
    else:  # chat: the tool list alone; each kind's one-line guide goes with its own call
        assert "calculator(expression: string)" in head and "Request:" not in head


@pytest.mark.block_network
def test_an_anthropic_format_server_that_refuses_cache_control_gets_the_prefix_as_plain_text(run_through: Any) -> None:
    message = "system.0.cache_control: Extra inputs are not permitted"
    refusal = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    provider = FakeProvider("anthropic", "anthropic", "claude-haiku-5-5", refuse_once=refusal)
    env = {"ANTHROPIC_API_KEY": "sk-test-key", "AEON_LLM_MODEL": "claude-haiku-5-5"}
    run = run_through(provider, CONFIG / "anthropic.yaml", ANTHROPIC_URL, env)
    assert run.exit_code == 0 and provider.problems == []
    assert all(isinstance(body["system"], str) for body in provider.bodies)  # every later call, not just the retry
    assert [r["refused"] for r in run.records if r["event"] == "llm_downgrade"] == ["cache_control"]


@pytest.mark.block_network
def test_a_parameter_the_model_refuses_is_dropped_once_for_the_whole_run_and_reported(run_through: Any) -> None:
    message = "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) is supported."
    refusal = {"error": {"message": message, "type": "invalid_request_error", "param": "temperature", "code": None}}
    provider = FakeProvider("openai", "openai-chat", "gpt-4.1-mini", refuse_once=refusal)
    env = {"OPENAI_API_KEY": "sk-test-key", "AEON_LLM_MODEL": "gpt-4.1-mini"}
    run = run_through(provider, CONFIG / "openai.yaml", OPENAI_URL, env)
    assert run.exit_code == 0 and provider.problems == []
    assert all("temperature" not in body for body in provider.bodies)  # every later call, not just the retry
    refused = [w for w in run.doc["warnings"] if w.startswith("provider refused")]  # the others: the scripted plan
    assert len(refused) == 1 and message in refused[0] and "no longer sent" in refused[0]
    assert [r["refused"] for r in run.records if r["event"] == "llm_downgrade"] == ["temperature"]


@pytest.mark.block_network
def test_a_two_pass_anthropic_run_sends_no_schema_keyword_the_api_refuses(run_through: Any) -> None:
    # The fake answers a refused keyword with the API's 400, so a run that still sent one would show a downgrade
    # round trip (and its warning) instead of failing quietly.
    provider = FakeProvider("anthropic", "anthropic", "claude-haiku-5-5", strict_schemas=True)
    env = {"ANTHROPIC_API_KEY": "sk-test-key", "AEON_LLM_MODEL": "claude-haiku-5-5"}
    run = run_through(provider, CONFIG / "anthropic.yaml", ANTHROPIC_URL, env)
    assert run.exit_code == 0, (run.stderr, run.doc.get("error"))
    assert run.doc["passes"] == 2
    assert provider.refused == []
    assert [r for r in run.records if r["event"] == "llm_downgrade"] == []
    assert not [w for w in run.doc["warnings"] if w.startswith("provider refused")]
    schemas = [body["output_config"]["format"]["schema"] for body in provider.bodies]
    assert len(schemas) == len(SCRIPT)  # every call kept its native structured output
    assert "{maxItems: " in json.dumps(schemas)  # the plan's step bound reached the model, in the description
