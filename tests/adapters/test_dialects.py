"""Provider dialects: detected from URL and model, chosen by config, and the schema forms each one is sent."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from aeon.adapters.llm.dialects import DIALECTS, choose, detect, is_reasoning_model
from aeon.adapters.llm.wire_schemas import revert, revert_text, to_wire
from aeon.application.errors import ConfigurationError
from aeon.application.kernel.executor import REASON_SCHEMA
from aeon.application.plans.validation import plan_schema
from aeon.entrypoints.cli import app


@pytest.mark.parametrize(
    ("wire", "url", "model", "expected"),
    [
        ("openai", "https://api.openai.com/v1", "gpt-4.1-mini", "openai-chat"),
        ("openai", "https://api.openai.com/v1", "gpt-5.2-chat-latest", "openai-chat"),
        ("openai", "https://api.openai.com/v1", "gpt-5.4-mini", "openai-reasoning"),
        ("openai", "https://api.openai.com/v1", "o3", "openai-reasoning"),
        ("openai", "https://api.openai.com/v1", "o4-mini-2025-04-16", "openai-reasoning"),
        ("openai", "https://openrouter.ai/api/v1", "openai/o3", "openai-reasoning"),  # an OpenAI model behind a router
        ("openai", "https://my.openai.azure.com/openai/v1", "deployment-7", "openai-chat"),
        ("openai", "http://localhost:11434/v1", "llama3.2", "ollama"),
        ("openai", "http://gpu-box:8000/v1", "Qwen/Qwen3-8B", "vllm"),
        ("openai", "http://127.0.0.1:8080/v1", "gemma-3-270m", "llamacpp"),
        ("openai", "https://api.groq.com/openai/v1", "llama-3.3-70b-versatile", "openai-compatible"),
        ("anthropic", "https://api.anthropic.com", "claude-haiku-5-5", "anthropic"),
        ("anthropic", "https://gateway.example", "claude-sonnet-5-5", "anthropic"),
        ("anthropic", "http://127.0.0.1:8089", "gemma-3-270m", "anthropic-compatible"),
    ],
)
def test_the_dialect_is_detected_from_the_base_url_and_model(wire: Any, url: str, model: str, expected: str) -> None:
    choice = detect(wire, url, model)
    assert choice.dialect.name == expected and choice.dialect.wire == wire
    assert choice.source.startswith("auto:")


def test_extended_thinking_selects_the_thinking_dialect() -> None:
    assert detect("anthropic", "https://api.anthropic.com", "claude-opus-5-5", thinking=True).dialect.thinking


def test_gpt5_chat_models_are_not_reasoning_models() -> None:
    assert is_reasoning_model("gpt-5") and is_reasoning_model("o1-mini") and not is_reasoning_model("gpt-5-chat-latest")


def test_a_configured_dialect_wins_and_a_dialect_of_the_other_wire_is_refused() -> None:
    assert choose("openai", "vllm", "https://api.openai.com/v1", "o3").dialect.name == "vllm"
    with pytest.raises(ConfigurationError, match="not a dialect of the anthropic wire format"):
        choose("anthropic", "openai-chat", "https://api.anthropic.com", "claude-haiku-5-5")


def test_a_dialect_that_does_not_fit_the_adapter_is_a_one_line_config_error(tmp_path, monkeypatch) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("llm: {adapter: anthropic, base_url: 'https://api.anthropic.com', model: m, dialect: vllm}\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "hi", "--config", str(cfg), "-q"])
    assert result.exit_code == 2
    assert "does not fit adapter 'anthropic'" in result.stderr and "Traceback" not in result.stderr


def test_every_dialect_has_a_summary_and_a_known_wire() -> None:
    assert all(d.summary and d.wire in ("openai", "anthropic") for d in DIALECTS.values())
    assert {d.name for d in DIALECTS.values() if d.wire == "openai"} >= {
        "openai-chat",
        "openai-reasoning",
        "llamacpp",
        "vllm",
        "ollama",
        "openai-compatible",
    }


# -- schema forms -------------------------------------------------------------------------------------------------

STEP = {"step_id": "s1", "description": "Add", "tool": "calculator", "args": {"expression": "5 + 10"}}


def test_the_grammar_form_closes_objects_and_bounds_strings_but_keeps_free_form_args_open() -> None:
    wire = to_wire(plan_schema(["calculator"]), "grammar")
    item = wire["properties"]["steps"]["items"]
    assert wire["additionalProperties"] is False and item["additionalProperties"] is False
    assert item["properties"]["description"]["maxLength"] == 400
    assert item["properties"]["args"] == {"type": "object"}
    assert "maxLength" not in item["properties"]["tool"]  # an enum is bounded already


def test_the_strict_form_makes_every_property_required_and_optional_ones_nullable() -> None:
    wire = to_wire(plan_schema(["calculator", "echo"]), "strict")
    item = wire["properties"]["steps"]["items"]
    assert item["required"] == list(item["properties"])
    assert item["properties"]["tool"] == {"type": ["string", "null"], "enum": ["calculator", "echo", None]}
    assert item["properties"]["args"]["type"] == ["string", "null"]  # free-form: a JSON string
    assert "minLength" not in json.dumps(wire) and "maxLength" not in json.dumps(wire)


def test_the_anthropic_form_closes_objects_and_moves_the_bounds_it_rejects_into_the_description() -> None:
    wire = to_wire(REASON_SCHEMA, "anthropic")
    assert wire["additionalProperties"] is False
    assert wire["properties"]["answer"] == {"type": "string", "description": "{minLength: 1, maxLength: 600}"}
    assert wire["required"] == REASON_SCHEMA["required"]  # optional stays optional there
    steps = to_wire(plan_schema(["echo"], max_steps=12), "anthropic")["properties"]["steps"]
    assert "maxItems" not in steps and steps["description"] == "{maxItems: 12}"
    assert steps["minItems"] == 1  # 0 and 1 are accepted; only a larger minimum moves
    described = {"type": "array", "description": "Pick some.", "minItems": 2, "uniqueItems": True}
    assert to_wire(described, "anthropic") == {
        "type": "array",
        "description": "Pick some. {minItems: 2, uniqueItems: true}",
    }


def test_the_anthropic_form_writes_a_nullable_type_list_as_an_any_of_with_a_null_branch() -> None:
    schema = {"type": ["string", "integer", "null"], "description": "An id.", "enum": ["a", 7, None], "maxLength": 4}
    assert to_wire(schema, "anthropic") == {
        "description": "An id. {maxLength: 4}",
        "anyOf": [{"type": "string", "enum": ["a"]}, {"type": "integer", "enum": [7]}, {"type": "null"}],
    }


def test_the_anthropic_form_sends_recursion_as_json_text_and_reverts_it() -> None:
    node = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        "required": ["name", "kids"],
    }
    tree = {"$ref": "#/$defs/node", "$defs": {"node": node}}
    wire = to_wire(tree, "anthropic")
    assert "$ref" not in json.dumps(wire) and "$defs" not in wire
    assert wire["properties"]["kids"]["items"]["type"] == "string"
    answer = {"name": "root", "kids": [json.dumps({"name": "leaf", "kids": []})]}
    assert revert(answer, tree) == {"name": "root", "kids": [{"name": "leaf", "kids": []}]}


def test_keywords_a_provider_refused_are_left_out_of_every_later_schema() -> None:
    wire = to_wire(plan_schema(["echo"]), "plain", removed={"maxItems"})
    assert "maxItems" not in json.dumps(wire) and "minItems" in json.dumps(wire)


def test_a_strict_answer_is_turned_back_into_the_shape_aeon_asked_for() -> None:
    schema = plan_schema(["calculator"])
    strict_answer = {
        "goal": "sum",
        "steps": [{**STEP, "args": json.dumps(STEP["args"]), "agent": None, "dependencies": None}],
    }
    assert revert(strict_answer, schema) == {"goal": "sum", "steps": [STEP]}


def test_reverting_leaves_what_does_not_fit_for_validation_to_report() -> None:
    schema = plan_schema(["calculator"])
    odd = {"goal": "sum", "steps": [{**STEP, "args": "not json"}], "extra": None}
    assert revert(odd, schema) == {"goal": "sum", "steps": [{**STEP, "args": "not json"}], "extra": None}
    assert revert_text("{broken", schema) == "{broken"
    same = json.dumps({"goal": "g", "steps": [STEP]})
    assert revert_text(same, schema) == same  # nothing to undo: the model's text is kept byte for byte
