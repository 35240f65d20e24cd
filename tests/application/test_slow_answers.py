"""Slow answers are said to be slow: every run has a time cap (the adapter's default when the config sets none), and
a run ended by answers that did not come in time says how slow they were and which setting to change — never
"provider unavailable" for a model that was reached and answered nothing in time."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_deadlines import TricklingServer
from typer.testing import CliRunner

from aeon.application.errors import LLMTooSlow
from aeon.application.kernel.run import RunSettings
from aeon.application.llm.gateway import LLMGateway
from aeon.domain.llm import Message
from aeon.entrypoints.cli import app
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import MAX_SECONDS_BY_ADAPTER, Settings
from aeon.testing import FakeClock, FunctionLLM, LLMCall, new_run, orchestrator

from cli_harness import SUM_STEP, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env")

SLOW = LLMTooSlow(
    "answers too slow after 3 attempts (no complete answer within 120 s; waited 0.5 s, 1.0 s)",
    attempts=3,
    cause="no complete answer within 120 s",
    waits=(0.5, 1.0),
)


def load_settings_for(tmp_path: Path, adapter: str, **sections: Any) -> Settings:
    """The settings of a config file naming `adapter` (with what each adapter needs to boot) and `sections`."""
    needs = {"scripted": {"script": "s.yaml"}, "openai": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}
    needs["anthropic"] = {"base_url": "http://127.0.0.1:9", "model": "m"}
    config = tmp_path / f"{adapter}.yaml"
    config.write_text(yaml.safe_dump({"llm": {"adapter": adapter, **needs.get(adapter, {})}, **sections}))
    return load_settings(config)


def taking(clock: FakeClock, seconds: float, *answers: str | Exception) -> FunctionLLM:
    """A model whose every call takes `seconds` on the run's clock, answering `answers` in order."""
    left = list(answers)

    def answer(call: LLMCall) -> str | Exception:
        clock.advance(seconds)
        return left.pop(0)

    return FunctionLLM(answer)


def test_a_model_that_answers_nothing_in_time_gets_no_second_round_and_the_error_says_how_slow() -> None:
    clock = FakeClock(step=0.0)
    llm = taking(clock, 30.0, "ok", SLOW)
    run = new_run("r", settings=RunSettings(ttl=1, max_llm_calls=5), clock=clock)
    gateway = LLMGateway(llm, run)
    asyncio.run(gateway.complete("plan", [Message(role="user", content="x")]))
    with pytest.raises(LLMTooSlow) as raised:
        asyncio.run(gateway.complete("evaluate", [Message(role="user", content="x")]))
    assert len(llm.calls) == 2 and clock.slept == []  # no paused extra round: it would be as slow
    message = str(raised.value)
    assert message.startswith("answers too slow after 3 attempts (no complete answer within 120 s")
    assert "this run's 2 LLM calls took 60.0 s (mean 30.0 s, last 30.0 s, slowest 30.0 s)" in message
    assert "raise llm.read_timeout" in message and "unavailable" not in message


def test_a_run_ended_by_slow_answers_is_provider_too_slow_not_provider_unavailable(tmp_path: Path) -> None:
    llm = FunctionLLM(lambda call: SLOW)
    result = asyncio.run(orchestrator(llm, run=RunSettings(evaluate=False), clock=FakeClock()).run("say hello"))
    assert result.status == "error" and result.error is not None
    assert result.error.code == "AEON.PHASE_TRANSITION.PROVIDER_TOO_SLOW"
    assert "answers too slow" in result.error.message and "raise llm.read_timeout" in result.error.message


def test_a_run_cut_by_its_time_cap_says_the_answers_took_the_time_and_names_the_setting() -> None:
    clock = FakeClock(step=0.0)
    plan = json.dumps({"goal": "g", "steps": [SUM_STEP, {"step_id": "s2", "description": "Say it", "agent": "llm"}]})
    llm = taking(clock, 30.0, plan, "The sum is 15.")
    result = asyncio.run(orchestrator(llm, run=RunSettings(evaluate=False, max_seconds=50), clock=clock).run("sum"))
    assert result.status == "ttl_expired" and result.ttl_expiration is not None
    assert result.ttl_expiration.cap == "max_seconds"
    message = result.ttl_expiration.message
    assert "the LLM answers were slow: 2 LLM calls took 60.0 s (mean 30.0 s, last 30.0 s" in message
    assert message.endswith("of the 60.0 s: raise run.max_seconds")


def test_a_real_http_model_trickling_past_its_read_timeout_ends_the_run_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with TricklingServer() as slow:
        llm = {"adapter": "openai", "base_url": slow.base_url, "model": "m", "read_timeout": 0.3, "max_attempts": 1}
        config = {"llm": llm, "log": {"path": str(tmp_path / "run.jsonl")}}
        cfg = tmp_path / "c.yaml"
        cfg.write_text(yaml.safe_dump(config), encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        began = time.monotonic()
        result = CliRunner().invoke(app, ["run", "say hello", "--config", str(cfg), "--json", "-q"])
        took = time.monotonic() - began
    doc = json.loads(result.stdout)
    assert result.exit_code == 4 and doc["error"]["code"] == "AEON.PHASE_TRANSITION.PROVIDER_TOO_SLOW"
    assert "answers too slow after 1 attempt (no complete answer within 0.3 s)" in doc["error"]["message"]
    assert "raise llm.read_timeout" in doc["error"]["message"]
    assert took < 5.0 and slow.requests == 1  # no pause and second round (8 s) for an answer that would be as slow


@pytest.mark.parametrize("adapter", sorted(MAX_SECONDS_BY_ADAPTER))
def test_every_adapter_has_a_default_time_cap_and_null_turns_it_off(adapter: str, tmp_path: Path) -> None:
    assert load_settings_for(tmp_path, adapter).run.max_seconds == MAX_SECONDS_BY_ADAPTER[adapter]
    assert load_settings_for(tmp_path, adapter, run={"max_seconds": None}).run.max_seconds is None
    assert load_settings_for(tmp_path, adapter, run={"max_seconds": 7}).run.max_seconds == 7
    assert MAX_SECONDS_BY_ADAPTER["local"] > MAX_SECONDS_BY_ADAPTER["openai"] > MAX_SECONDS_BY_ADAPTER["scripted"]


def test_the_time_cap_a_run_had_is_on_its_run_start_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = scripted_config(tmp_path, [json.dumps({"goal": "g", "steps": [SUM_STEP]})])
    result = CliRunner().invoke(app, ["run", "sum", "--config", str(config), "--no-durable", "-q"])
    assert result.exit_code == 0, result.stdout
    start = json.loads((tmp_path / "logs" / "run.jsonl").read_text().splitlines()[0])
    assert start["event"] == "run_start" and start["max_seconds"] == MAX_SECONDS_BY_ADAPTER["scripted"]
