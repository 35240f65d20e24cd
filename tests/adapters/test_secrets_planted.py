"""A planted API key goes out in the Authorization header and nowhere else: not in output, logs, errors or cassettes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from typer.testing import CliRunner, Result

from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.application.errors import LLMRejected
from aeon.domain.llm import Message
from aeon.entrypoints.cli import app

ROOT = Path(__file__).resolve().parents[2]
OPENAI_CONFIG = ROOT / "config" / "openai.yaml"
CASSETTES = ROOT / "tests" / "cassettes"
KEY = "sk-planted-SECRET-0123456789"
BASE_URL = "https://llm.planted.invalid/v1"
REQUEST = "calculate the sum of 5 and 10"
REJECTION = {
    "error": {
        "message": f"Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com.",
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }
}
PLAN = {
    "goal": REQUEST,
    "steps": [
        {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}},
        {"step_id": "s2", "description": "State the result of s1", "agent": "llm"},
    ],
}

runner = CliRunner()


def chat(content: str) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-planted",
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 10},
        },
    )


@pytest.fixture(autouse=True)
def _planted_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the planted key and the fake endpoint reach the config; a stray default log lands in tmp_path."""
    for name in list(os.environ):
        if name.startswith("AEON_") or name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("AEON_LLM_BASE_URL", BASE_URL)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def provider() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE_URL, assert_all_called=True) as router:
        yield router


def run_cli(log: Path) -> Result:
    history = log.with_name("history.json")
    return runner.invoke(
        app,
        [
            "run",
            REQUEST,
            "--config",
            str(OPENAI_CONFIG),
            "--json",
            "--log-file",
            str(log),
            "--quiet",
            "--history",
            str(history),
        ],
    )


def assert_key_sent_only_as_bearer(router: respx.MockRouter) -> None:
    assert router.calls, "no request reached the provider"
    for call in router.calls:
        assert call.request.headers["authorization"] == f"Bearer {KEY}"
        assert KEY.encode() not in call.request.content  # the body never carries it


def exception_texts(exc: BaseException | None) -> str:
    """str, repr, args and the formatted traceback of an exception and everything it chains to."""
    texts: list[str] = []
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        texts += [str(exc), repr(exc), *map(repr, exc.args), "".join(traceback.format_exception(exc))]
        exc = exc.__cause__ or exc.__context__
    return "\n".join(texts)


def assert_nowhere(key: str, **places: Any) -> None:
    leaks = [name for name, text in places.items() if key in str(text)]
    assert not leaks, f"the key leaked into: {', '.join(leaks)}"


def test_a_401_echoing_the_key_exits_4_with_a_one_line_rejection_and_leaks_it_nowhere(
    provider: respx.MockRouter, tmp_path: Path
) -> None:
    provider.post("/chat/completions").mock(return_value=httpx.Response(401, json=REJECTION))
    log = tmp_path / "run.jsonl"

    result = run_cli(log)

    assert result.exit_code == 4, (result.stdout, result.stderr)
    doc = json.loads(result.stdout)
    message = doc["error"]["message"]
    assert message.startswith("rejected: HTTP 401 Incorrect API key provided:"), message
    assert "\n" not in message
    assert json.loads(log.read_text(encoding="utf-8").splitlines()[-1])["event"] == "run_end"
    assert_key_sent_only_as_bearer(provider)
    assert_nowhere(
        KEY,
        stdout=result.stdout,
        stderr=result.stderr,
        log=log.read_text(encoding="utf-8"),
        json_document=json.dumps(doc),
        exception=exception_texts(result.exception),
    )

    # Without --json the same cause is one line on stderr.
    plain = runner.invoke(app, ["run", REQUEST, "--config", str(OPENAI_CONFIG), "--log-file", str(log), "--quiet"])
    assert plain.exit_code == 4
    lines = [line for line in plain.stderr.splitlines() if "rejected" in line]
    assert len(lines) == 1 and re.fullmatch(r"aeon: rejected: HTTP 401 Incorrect API key provided: \S+.*", lines[0])
    assert_nowhere(KEY, stdout=plain.stdout, stderr=plain.stderr, log=log.read_text(encoding="utf-8"))


def test_the_adapter_error_for_a_401_echoing_the_key_does_not_carry_it(provider: respx.MockRouter) -> None:
    provider.post("/chat/completions").mock(return_value=httpx.Response(401, json=REJECTION))

    async def call() -> None:
        llm = OpenAICompatLLM(BASE_URL, "gpt-4o-mini", KEY)
        try:
            assert KEY not in repr(llm)
            await llm.complete([Message(role="user", content="hi")])
        finally:
            await llm.aclose()

    with pytest.raises(LLMRejected) as caught:
        asyncio.run(call())
    assert caught.value.status == 401
    assert_key_sent_only_as_bearer(provider)
    assert_nowhere(KEY, exception=exception_texts(caught.value))


def enum_first(schema: dict[str, Any], field: str) -> Any:
    return schema["properties"][field]["enum"][0]


def answer_for(request: httpx.Request) -> httpx.Response:
    """A cooperative provider: a sound answer for each phase's schema, plain text for the plan's llm step."""
    body = json.loads(request.content)
    fmt = body.get("response_format")
    if fmt is None:
        return chat("The sum is 15.")
    name, schema = fmt["json_schema"]["name"], fmt["json_schema"]["schema"]
    answers: dict[str, Any] = {
        "plan": PLAN,
        "step_result": {"answer": "The sum is 15.", "clarity_state": "CLEAR", "handoff_to_next": ""},
        "evaluation": {
            "issues": [],
            "completeness_score": 1.0,
            "coherence_score": 1.0,
            "consistent": True,
            "explanation": "15 is the sum of 5 and 10.",
        },
    }
    if name in ("task_profile", "profile_and_plan"):
        dims = schema["properties"]["profile"] if name == "profile_and_plan" else schema
        profile = {
            "reasoning_depth": 1,
            "information_sufficiency": 1.0,
            "expected_tool_usage": enum_first(dims, "expected_tool_usage"),
            "output_breadth": enum_first(dims, "output_breadth"),
            "confidence_requirement": enum_first(dims, "confidence_requirement"),
            "raw_inference": "one addition",
        }
        answers[name] = {"profile": profile, "plan": PLAN} if name == "profile_and_plan" else profile
    assert name in answers, f"the run asked for a new schema {name!r}: teach this fake provider a sound answer"
    return chat(json.dumps(answers[name]))


def test_a_successful_run_sends_the_key_as_bearer_and_leaks_it_nowhere(
    provider: respx.MockRouter, tmp_path: Path
) -> None:
    provider.post("/chat/completions").mock(side_effect=answer_for)
    log = tmp_path / "run.jsonl"

    result = run_cli(log)

    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    doc = json.loads(result.stdout)
    assert doc["status"] == "completed"
    assert doc["outputs"]["s1"]["output"] == 15
    assert doc["outputs"]["s2"]["output"] == "The sum is 15."
    assert json.loads(log.read_text(encoding="utf-8").splitlines()[-1])["event"] == "run_end"
    assert len(provider.calls) >= 2  # at least the plan and the llm step's answer
    assert_key_sent_only_as_bearer(provider)
    assert_nowhere(
        KEY,
        stdout=result.stdout,
        stderr=result.stderr,
        log=log.read_text(encoding="utf-8"),
        history=log.with_name("history.json").read_text(encoding="utf-8"),
        exception=exception_texts(result.exception),
    )


def test_no_cassette_holds_a_key_or_a_credential_header() -> None:
    files = sorted(path for path in CASSETTES.rglob("*") if path.is_file())
    credential = re.compile(
        r"Bearer \S|\bsk-[A-Za-z0-9_-]{6,}|^\s*-?\s*(authorization|x-api-key|api-key)\s*:", re.I | re.M
    )
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert KEY not in text, path
        found = credential.search(text)
        assert found is None, f"{path}: credential-looking text {found.group(0)!r}"
