"""`AEON_LLM_ADAPTER=openai|anthropic|scripted|local` works without a config file, as the README says; a missing
setting is one line naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from cli_harness import CONFIG_DIR, REQUEST, assert_exit, invoke, one_line
from multipass import profile

pytestmark = pytest.mark.usefixtures("isolated_env")

PLAN = {"goal": REQUEST, "steps": [{"step_id": "s1", "description": "Add", "tool": "calculator", "args": "{}"}]}
PLAN["steps"][0]["args"] = json.dumps({"expression": "5 + 10"})  # strict structured outputs send it as JSON text
VERDICT = {"completeness_score": 1, "coherence_score": 1, "consistent": True, "explanation": "done", "issues": []}
ANSWERS = {
    "profile_and_plan": {"profile": json.loads(profile(1, 1.0, "narrow", "low")), "plan": PLAN},
    "plan": PLAN,
    "evaluation": {"issues": [], **VERDICT},
}


def answer_for(body: dict[str, Any]) -> str:
    """The scripted answer for the prompt kind the request asks for (its schema, or the prompt text)."""
    name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    if name is None:  # Anthropic's output_config carries no name: tell the kinds apart by their properties
        props = body["output_config"]["format"]["schema"]["properties"]
        fitting = [kind for kind, value in ANSWERS.items() if set(value) <= set(props)]
        name = max(fitting, key=lambda kind: len(ANSWERS[kind]))
    return json.dumps(ANSWERS[name])


def openai_reply(request: httpx.Request) -> httpx.Response:
    content = answer_for(json.loads(request.content))
    return httpx.Response(200, json={"choices": [{"message": {"content": content}, "finish_reason": "stop"}]})


def anthropic_reply(request: httpx.Request) -> httpx.Response:
    text = answer_for(json.loads(request.content))
    return httpx.Response(200, json={"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"})


@pytest.mark.parametrize(
    ("adapter", "key", "url", "reply"),
    [
        ("openai", "OPENAI_API_KEY", "https://api.openai.com/v1/chat/completions", openai_reply),
        ("anthropic", "ANTHROPIC_API_KEY", "https://api.anthropic.com/v1/messages", anthropic_reply),
    ],
)
def test_a_provider_adapter_switched_on_by_env_alone_runs_against_the_providers_api(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, adapter: str, key: str, url: str, reply: Any
) -> None:
    monkeypatch.setenv("AEON_LLM_ADAPTER", adapter)
    monkeypatch.setenv(key, "sk-test-key")
    with respx.mock() as router:
        route = router.post(url).mock(side_effect=reply)
        result = invoke("run", REQUEST, "--json")
    assert_exit(result, 0)
    doc = json.loads(result.stdout)
    assert doc["status"] == "completed" and doc["outputs"]["s1"]["output"] == 15
    assert route.calls.last.request.headers.get("authorization", route.calls.last.request.headers.get("x-api-key"))


@pytest.mark.parametrize(("adapter", "var"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_a_provider_adapter_without_its_key_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, adapter: str, var: str
) -> None:
    monkeypatch.setenv("AEON_LLM_ADAPTER", adapter)
    result = invoke("run", REQUEST)
    assert_exit(result, 2)
    assert f"set {var}" in one_line(result.stderr)


def test_a_self_hosted_endpoint_named_by_env_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEON_LLM_ADAPTER", "openai")
    monkeypatch.setenv("AEON_LLM_BASE_URL", "http://gpu-box:8000/v1")
    monkeypatch.setenv("AEON_LLM_MODEL", "my-model")
    with respx.mock() as router:
        route = router.post("http://gpu-box:8000/v1/chat/completions").mock(side_effect=openai_reply)
        result = invoke("run", REQUEST, "--json")
    assert_exit(result, 0)
    assert "authorization" not in route.calls.last.request.headers
    assert "dialect vllm" in result.stderr.splitlines()[0]


def test_the_scripted_adapter_without_a_script_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEON_LLM_ADAPTER", "scripted")
    result = invoke("run", REQUEST)
    assert_exit(result, 2)
    assert "llm.script is not set" in one_line(result.stderr) and "AEON_LLM_SCRIPT" in result.stderr


def test_the_scripted_adapter_takes_its_script_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEON_LLM_ADAPTER", "scripted")
    monkeypatch.setenv("AEON_LLM_SCRIPT", str(CONFIG_DIR / "scripts" / "sum-5-and-10.yaml"))
    result = invoke("run", REQUEST, "--json", "-q")
    assert_exit(result, 0)
    assert json.loads(result.stdout)["answer"] is not None
