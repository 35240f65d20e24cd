"""One redaction policy at every exit of a run: configured values, secret-named keys, credential-shaped text."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import msgspec
import pytest
from free_records import rec

from aeon.adapters.durable.steps import redacted_error
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.adapters.tools.decorator import tool
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.errors import LLMRejected
from aeon.application.kernel.run import RunSettings
from aeon.application.redaction import REDACTED, Redactor
from aeon.domain.plan import Plan
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.container import run_scope
from aeon.entrypoints.secrets import run_secrets
from aeon.testing import FakeClock, ListLog, ListProgress

KEY = "sk-conf-0123456789abcdef"
TOKEN = "eyJhbGciOiJIUzI1NiJ9.payload.sig"


def test_credential_shaped_text_is_blanked_and_usage_words_are_not() -> None:
    r = Redactor([KEY])
    cases = {
        f'{{"Authorization": "Bearer {TOKEN}"}}': '{"Authorization": "[REDACTED]"}',
        f"{{'authorization': 'Bearer {TOKEN}'}}": "{'authorization': '[REDACTED]'}",
        f"GET /?api_key={TOKEN}&page=2": "GET /?api_key=[REDACTED]&page=2",
        f"x-api-key: {TOKEN}\nnext": "x-api-key: [REDACTED]\nnext",
        f"curl -H 'Bearer {TOKEN}'": "curl -H 'Bearer [REDACTED]'",
        f"refused: token={TOKEN} expired": "refused: token=[REDACTED] expired",
        '{\\"password\\": \\"two words\\"}': '{\\"password\\": \\"[REDACTED]\\"}',
        f"uses {KEY}!": "uses [REDACTED]!",
        "max_tokens: 512, completion_tokens=3, tokens: 9": "max_tokens: 512, completion_tokens=3, tokens: 9",
        "the bearer of good news": "the bearer of good news",
    }
    for text, redacted in cases.items():
        assert r.text(text) == redacted, text


# Credentials nobody configured, in the shapes tools and services print them: each is blanked wherever it appears.
GHP = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8"
UNCONFIGURED = {
    f"token {GHP} in the clone log": "token [REDACTED] in the clone log",
    "pat github_pat_11AAAAAAA0123456789_abcdefghijklmnopqrstuvwxyz0123": "pat [REDACTED]",
    "aws AKIAIOSFODNN7EXAMPLE key": "aws [REDACTED] key",
    "openai sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12": "openai [REDACTED]",
    "slack xoxb-1234567890-0987654321-AbCdEfGhIj": "slack [REDACTED]",
    "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9Pl.": "jwt [REDACTED].",
    "git clone https://bot:hunter2hunter2@git.example.invalid/r.git": "git clone https://bot:[REDACTED]@git.example.invalid/r.git",
    "PGPASSWORD=pg-pass-9 psql": "PGPASSWORD=[REDACTED] psql",
    'env GITHUB_TOKEN="gh-value-1" set': 'env GITHUB_TOKEN="[REDACTED]" set',
}
# Ordinary text that shares a prefix or a word with those shapes is left as it is.
ORDINARY = [
    "task-list, disk-usage, ask-questions-about-it and sk-learn-is-a-python-library",
    "the sk-8 board, ghp_short, AKIA, Asia/Tokyo, xox, eyJ",
    "http://localhost:8080/path?x=1@2 and mailto:bob@example.com and https://example.com/@user",
    "MAX_TOKENS=500, max_tokens=20, tokens: 5, SORT_KEY=id",
]


@pytest.mark.parametrize("text", list(UNCONFIGURED))
def test_well_known_token_shapes_url_passwords_and_upper_cased_names_are_blanked_unconfigured(text: str) -> None:
    assert Redactor().text(text) == UNCONFIGURED[text]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_words_sharing_a_prefix_with_a_token_shape_are_left_alone(text: str) -> None:
    assert Redactor().text(text) == text


def test_values_under_upper_cased_secret_names_are_blanked_and_counts_are_not() -> None:
    data = {"GITHUB_TOKEN": "v1", "AWS_SECRET_ACCESS_KEY": "v2", "PGPASSWORD": "v3", "MAX_TOKENS": 5, "SORT_KEY": "id"}
    assert Redactor().scrub(data) == {
        "GITHUB_TOKEN": REDACTED,
        "AWS_SECRET_ACCESS_KEY": REDACTED,
        "PGPASSWORD": REDACTED,
        "MAX_TOKENS": 5,
        "SORT_KEY": "id",
    }
    assert Redactor().data({"env": data})["env"]["GITHUB_TOKEN"] == REDACTED  # the byte check lets it through


def test_a_configured_secret_is_found_in_its_json_escaped_forms() -> None:
    secret = 'p"ss\\word-1234'
    r = Redactor([secret])
    once = json.dumps(secret)[1:-1]
    twice = json.dumps(json.dumps({"k": secret}))
    assert secret not in r.text(f"a {secret} b") and once not in r.text(f"a {once} b")
    assert secret not in json.loads(json.loads(r.text(twice)))["k"]


def test_the_log_blanks_an_authorization_header_a_tool_output_holds_as_text() -> None:
    stream = io.StringIO()
    JsonlEventLog(None, stream=stream).emit(
        rec("tool_call", output=f"HTTP/1.1 200\r\nAuthorization: Bearer {TOKEN}\r\n")
    )
    assert TOKEN not in stream.getvalue()
    assert json.loads(stream.getvalue())["output"] == "HTTP/1.1 200\r\nAuthorization: [REDACTED]\r\n"


def test_secret_named_environment_values_and_url_passwords_are_secrets() -> None:
    settings = Settings.model_validate({"durable": {"database_url": "postgresql://aeon:pg-s3cret-pw@db:5432/aeon"}})
    env = {"GITHUB_TOKEN": "ghp_0123456789", "AEON_DEBUG": "1234567890", "MY_TOKEN": "1", "SIGNING_KEY": "k" * 9}
    assert run_secrets(settings, env) == sorted(["ghp_0123456789", "pg-s3cret-pw", "k" * 9])


def test_a_tool_gets_its_key_while_the_prompt_result_progress_and_log_get_it_redacted() -> None:
    """The next prompt holds the earlier step's output redacted; the result, progress and log hold no secret."""
    given: list[str] = []
    registry = ToolRegistry()

    @tool(example={"url": "u", "api_key": "k"})
    def fetch(url: str, api_key: str) -> dict[str, Any]:
        """Call the service."""
        given.append(api_key)
        return {"headers": {"Authorization": f"Bearer {TOKEN}"}, "echo": f"used {KEY}"}

    registry.register_function(fetch)
    doc = {
        "goal": "call",
        "steps": [
            {"step_id": "s1", "description": "call", "tool": "fetch", "args": {"url": "u", "api_key": KEY}},
            {"step_id": "s2", "description": "say what s1 returned", "agent": "llm"},
        ],
    }
    llm = ScriptedLLM([f"It answered with Authorization: Bearer {TOKEN}."])
    log, progress = ListLog(), ListProgress()
    orchestrator = run_scope(
        Settings(),
        run=RunSettings(ttl=1, evaluate=False),
        llm=llm,
        tools=registry,
        logger=log,
        progress=progress,
        clock=FakeClock(),
    )
    orchestrator.redactor = Redactor([KEY])
    result = asyncio.run(orchestrator.run("call", plan=msgspec.convert(doc, Plan)))

    assert given == [KEY]  # the call got the real value
    prompts = json.dumps([msgspec.to_builtins(r.messages) for r in llm.requests])
    assert "[REDACTED]" in prompts  # s1's output reached the prompt, redacted
    shown = {
        "prompts": prompts,
        "progress": msgspec.json.encode(progress.events).decode(),
    }
    for where, text in shown.items():
        assert KEY not in text and TOKEN not in text, where
    # the caller's copy: the configured key redacted, the token the tool produced whole (Redactor.for_caller)
    returned = msgspec.json.encode(result).decode()
    assert KEY not in returned and TOKEN in returned
    assert result.plan is not None and result.plan.steps[0].args["api_key"] == REDACTED


def test_a_recorded_error_is_redacted_with_its_attributes() -> None:
    exc = LLMRejected(f"rejected: HTTP 401 bad key {KEY}", status=401, provider_message=f"Incorrect API key {KEY}")
    clean = redacted_error(exc, Redactor([KEY]))
    assert KEY not in str(clean) and KEY not in repr(vars(clean)) and isinstance(clean, LLMRejected)
    assert clean.status == 401 and KEY in str(exc)  # the original is left as it was


def test_a_short_configured_secret_is_blanked_only_as_a_whole_value() -> None:
    """OPENAI_API_KEY=k: never shown as a value, but the "k" of every word and JSON key name is left alone (a
    redacted result still decodes)."""

    class Shown(msgspec.Struct):
        kind: str
        key: str
        notes: dict[str, str]

    shown = Redactor(["k"]).struct(Shown(kind="keep", key="k", notes={"k": "k", "kept": "key k"}), Shown)

    assert shown == Shown(kind="keep", key=REDACTED, notes={"k": REDACTED, "kept": "key k"})
    assert Redactor(["k"]).for_caller().text("k") == REDACTED


def test_the_callers_copy_is_the_result_itself_when_no_value_is_configured() -> None:
    """With no configured secret (a local model, no key) the caller's copy has nothing to blank: the result is
    handed back as it is, a token the run produced included, without a copy; with one, the copy blanks it."""

    class Answer(msgspec.Struct):
        text: str

    produced = Answer(text="token ghp_" + "a1B2c3D4" * 5)  # a GitHub token a tool returned
    assert Redactor().for_caller().struct(produced, Answer) is produced
    assert Redactor().struct(produced, Answer) == Answer(text=f"token {REDACTED}")
    configured = Answer(text=f"key {KEY}, {produced.text}")
    assert Redactor([KEY]).for_caller().struct(configured, Answer) == Answer(text=f"key {REDACTED}, {produced.text}")
