"""A remote A2A agent as a tool (tools.a2a): called with the official protocol, bounded in time and bytes, its
output untrusted, its config checked at boot. The agent is a real a2a-sdk server on 127.0.0.1 (a2a_harness)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import aeon
from aeon.adapters.tools.a2a import A2AAgentConfig, A2ATools
from aeon.application.errors import ConfigurationError
from aeon.application.redaction import Redactor
from aeon.domain.provenance import Effect
from aeon.domain.tools import ToolResult
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.secrets import run_secrets

from a2a_harness import HEARD, echo_agent, serve


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    with serve(echo_agent) as url:
        yield url


def call(tools: A2ATools, message: str, time_left: float | None = None) -> ToolResult:
    return asyncio.run(tools.invoke("helper", {"message": message}, time_left=time_left))


def test_the_agent_answers_the_message_as_the_tools_output(agent_url: str) -> None:
    tools = A2ATools([A2AAgentConfig(name="helper", url=agent_url)])
    result = call(tools, "hello there")
    assert result.error is None
    assert result.output == "echo: hello there"
    spec = tools.get("helper")
    assert spec is not None and spec.effect is Effect.EXTERNAL and spec.trusted_output is False


def test_a_slow_agent_is_cut_at_its_timeout(agent_url: str) -> None:
    tools = A2ATools([A2AAgentConfig(name="helper", url=agent_url, timeout=0.3)])
    result = call(tools, "slow please")
    assert result.error is not None and "did not answer within 0.3 s (its timeout)" in result.error
    cut = call(tools, "slow again", time_left=0.2)
    assert cut.cut_at_time_left and "the run's time cap" in (cut.error or "")


def test_an_agent_sending_more_than_its_bound_is_refused(agent_url: str) -> None:
    tools = A2ATools([A2AAgentConfig(name="helper", url=agent_url, max_response_bytes=20_000)])
    result = call(tools, "flood")
    assert result.output is None
    assert result.error == "A2A agent 'helper' sent more than 20,000 bytes"


def test_a_task_not_completed_is_an_error_saying_its_state(agent_url: str) -> None:
    tools = A2ATools([A2AAgentConfig(name="helper", url=agent_url)])
    assert call(tools, "ask me").error == "A2A agent 'helper' ended its task input-required: which city?"
    assert call(tools, "fail now").error == "A2A agent 'helper' ended its task failed: cannot do that"


def test_a_failure_is_redacted(agent_url: str) -> None:
    secret = "s3cret-token-value-123"
    tools = A2ATools([A2AAgentConfig(name="helper", url=f"http://127.0.0.1:1/{secret}")], redactor=Redactor([secret]))
    result = call(tools, "hello")
    assert result.error is not None and result.error.startswith("A2A agent 'helper' failed:")
    assert secret not in result.error


def test_a_run_calls_the_agent_and_labels_its_answer_untrusted(agent_url: str, tmp_path: Path) -> None:
    plan = (
        '{"goal": "ask the helper", "steps": [{"step_id": "s1", "description": "Ask the helper", "tool": "helper", '
        '"args": {"message": "what is 2+2?"}}]}'
    )
    script = tmp_path / "script.yaml"
    script.write_text(f"request: ask the helper\nresponses:\n  - '{plan}'\n")
    config = {
        "llm": {"adapter": "scripted", "script": str(script)},
        "run": {"evaluate": False},
        "tools": {"a2a": [{"name": "helper", "url": agent_url, "timeout": 10}]},
        "log": {"path": str(tmp_path / "log.jsonl")},
    }
    HEARD.clear()
    result = aeon.run("ask the helper", config=config)
    assert result.status == "completed", result.error
    assert result.outputs["s1"].output == "echo: what is 2+2?"
    assert HEARD == ["what is 2+2?"]
    assert result.untrusted_sources == ["tool:helper"]


def test_a_typo_in_an_a2a_entry_is_a_boot_error(tmp_path: Path) -> None:
    config = {"tools": {"a2a": [{"name": "helper", "url": "http://127.0.0.1:9", "timout": 3}]}}
    with pytest.raises(ConfigurationError, match="timout"):
        aeon.run("hello", config=config)
    with pytest.raises(ConfigurationError, match="url must start with http"):
        aeon.run("hello", config={"tools": {"a2a": [{"name": "helper", "url": "ftp://x"}]}})


def test_an_agents_headers_and_url_password_are_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: None
) -> None:
    monkeypatch.setenv("PLAIN_NAME", "innocent-looking-credential")
    agents = [
        {
            "name": "a",
            "url": "https://h/a",
            "headers": {"X-Thing": "${PLAIN_NAME}", "Authorization": "Bearer l-9876"},
        },
        {"name": "b", "url": "https://bob:url-password-123@h/b"},
    ]
    path = tmp_path / "a2a.yaml"
    path.write_text(json.dumps({"tools": {"a2a": agents}}), encoding="utf-8")
    secrets = run_secrets(load_settings(path), environ={})
    assert {"innocent-looking-credential", "Bearer l-9876", "url-password-123"} <= set(secrets)
