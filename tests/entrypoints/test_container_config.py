"""The composition root: each shipped config resolves every provider; env markers and base.yaml work as documented."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from dependency_injector import providers
from free_records import rec
from pydantic import BaseModel, SecretStr
from pytest_socket import disable_socket, enable_socket

from aeon.adapters.eventlog.jsonl import REDACTED, JsonlEventLog
from aeon.adapters.memory.inmemory import InMemoryKV
from aeon.adapters.tools.composite import CompositeTools
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.errors import ConfigurationError
from aeon.application.kernel.orchestrator import Orchestrator, RunSettings
from aeon.domain.ledger import ModelPrice
from aeon.entrypoints.config.layers import BASE_CONFIG, load_settings
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.container import build_container, opened, provided

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"
SHIPPED = ["base.yaml", *sorted(p.name for p in CONFIG_DIR.glob("*.yaml"))]  # base.yaml is package data
LLM_CLASS = {
    "scripted": "ScriptedLLM",
    "openai": "OpenAICompatLLM",
    "anthropic": "AnthropicLLM",
    "local": "LocalLlamaLLM",
}
FAKE_KEY = "sk-test-not-a-real-key-1234"
SUITE_VARIABLES = ("AEON_DURABLE", "AEON_LOCAL_SLOT_CACHE_MB", "AEON_LOCAL_KEEP_ALIVE")


pytestmark = pytest.mark.usefixtures("isolated_env")


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Keys and endpoints for every adapter, a log in tmp_path, no network and no child processes."""
    monkeypatch.setenv("AEON_LOG_FILE", str(tmp_path / "log" / "runs.jsonl"))
    monkeypatch.setenv("AEON_LOCAL_CACHE_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)

    def no_child(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"resolving a provider started a process: {args!r}")

    monkeypatch.setattr(subprocess, "Popen", no_child)
    disable_socket(allow_unix_socket=True)  # the event loop's self-pipe is a unix socketpair
    try:
        yield tmp_path
    finally:
        enable_socket()


def _settings_for(name: str) -> Settings:
    return load_settings(None if name == "base.yaml" else CONFIG_DIR / name)


def test_every_shipped_config_file_is_covered() -> None:
    assert BASE_CONFIG.is_file()
    assert not (CONFIG_DIR / "base.yaml").exists(), "one base config: the package's, or the two drift apart"
    assert {"openai.yaml", "anthropic.yaml", "scripted-demo.yaml"} <= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_config_resolves_every_provider_without_network_or_processes(name: str, offline: Path) -> None:
    settings = _settings_for(name)
    if settings.otel.enabled:  # a traced config needs the [otel] extra, which CI does not install
        pytest.importorskip("opentelemetry.sdk")
    container = build_container(settings)

    assert container.settings() is settings
    assert container.clock().monotonic() >= 0
    event_log = container.event_log()
    assert isinstance(event_log, JsonlEventLog)
    assert event_log.path == offline / "log" / "runs.jsonl"
    registry = container.registry()
    assert isinstance(registry, ToolRegistry)
    assert {"echo", "calculator"} <= {t.name for t in registry.list()}
    if settings.tools.mcp:  # MCP servers start when the tools are first needed: tests/adapters/test_mcp_servers.py
        container.tools.override(providers.Object(CompositeTools(registry)))
    tools = container.tools()
    assert isinstance(tools, CompositeTools)
    assert [t.name for t in tools.list()][: len(registry.list())] == [t.name for t in registry.list()]
    assert isinstance(container.memory(), InMemoryKV)
    run_settings = container.run_settings()
    assert run_settings == RunSettings(
        ttl=settings.run.ttl,
        max_llm_calls=settings.run.max_llm_calls,
        max_tokens=settings.run.max_tokens,
        max_seconds=settings.run.max_seconds,
        max_plan_steps=settings.run.max_plan_steps,
        llm_max_tokens=settings.llm.max_tokens,
        evaluate=settings.run.evaluate,
        max_cost=settings.run.max_cost,
        prices={m: ModelPrice(**p.model_dump()) for m, p in settings.prices.items()},
    )

    async def resolve_the_resources() -> None:
        async with opened(container):
            llm = await provided(container.llm)
            assert type(llm).__name__ == LLM_CLASS[settings.llm.adapter]
            assert await provided(container.llm) is llm  # one client per container, closed at shutdown
            assert getattr(llm, "server_pid", None) is None  # a local model is started on first use, not on resolve
            assert isinstance(await provided(container.orchestrator), Orchestrator)

    asyncio.run(resolve_the_resources())
    event_log.close()


def test_scripted_demo_script_path_is_relative_to_the_config_file_not_the_working_dir(tmp_path: Path) -> None:
    settings = load_settings(CONFIG_DIR / "scripted-demo.yaml")

    assert settings.llm.script == CONFIG_DIR / "scripts" / "sum-5-and-10.yaml"
    assert settings.llm.script.is_file()


def test_cli_overrides_win_over_the_config_file_and_base_yaml(tmp_path: Path) -> None:
    config = tmp_path / "aeon.yaml"
    llm = {"adapter": "scripted", "script": "answers.yaml"}
    config.write_text(yaml.safe_dump({"llm": llm, "run": {"ttl": 7, "max_llm_calls": 5}}))
    settings = load_settings(config, {"run.ttl": 1, "log.path": str(tmp_path / "x.jsonl")})

    assert settings.run.ttl == 1
    assert settings.run.max_llm_calls == 5  # from the file, over base.yaml's 30
    assert settings.run.max_plan_steps == 20  # from base.yaml
    assert settings.log.path == tmp_path / "x.jsonl"


# -- environment markers --------------------------------------------------------------------------------------------


def test_base_yaml_adapter_defaults_to_local_without_env() -> None:
    assert load_settings(None).llm.adapter == "local"


def test_aeon_llm_adapter_env_overrides_the_base_yaml_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEON_LLM_ADAPTER", "scripted")
    monkeypatch.setenv("AEON_LLM_SCRIPT", "answers.yaml")

    assert load_settings(None).llm.adapter == "scripted"


def test_aeon_llm_adapter_env_with_an_unknown_adapter_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEON_LLM_ADAPTER", "gpt-magic")

    with pytest.raises(ConfigurationError, match=r"llm\.adapter"):
        load_settings(None)


@pytest.mark.parametrize(
    ("tree", "line"),
    [
        ({"llm": {"scirpt": "x"}}, "config error at llm.scirpt: unknown key (did you mean 'script'?)"),
        ({"lmm": {"adapter": "local"}}, "config error at lmm: unknown key (did you mean 'llm'?)"),
        (
            {"run": {"max_plan_step": 9}},
            "config error at run.max_plan_step: unknown key (did you mean 'max_plan_steps'?)",
        ),
        ({"prices": {"m": {"input": 1, "ouptut": 2}}}, "at prices.m.ouptut: unknown key (did you mean 'output'?)"),
        ({"run": {"zzz": 1}}, "config error at run.zzz: unknown key [from"),  # nothing close: no guess
    ],
)
def test_a_mistyped_key_is_answered_with_the_key_it_is_closest_to(
    tmp_path: Path, tree: dict[str, Any], line: str
) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(tree), encoding="utf-8")

    with pytest.raises(ConfigurationError) as caught:
        load_settings(path)
    assert line in str(caught.value)


def test_openai_yaml_reads_endpoint_and_model_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEON_LLM_BASE_URL", "http://127.0.0.1:8080/v1")
    monkeypatch.setenv("AEON_LLM_MODEL", "gemma-3-270m")
    settings = load_settings(CONFIG_DIR / "openai.yaml")

    assert settings.llm.adapter == "openai"
    assert settings.llm.base_url == "http://127.0.0.1:8080/v1"
    assert settings.llm.model == "gemma-3-270m"
    assert build_container(settings).llm_adapter().describe().base_url == "http://127.0.0.1:8080/v1"


def test_openai_yaml_falls_back_to_the_marker_defaults_without_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    settings = load_settings(CONFIG_DIR / "openai.yaml")

    assert settings.llm.base_url == "https://api.openai.com/v1"
    assert settings.llm.model == "gpt-5.4-mini"


def test_the_hosted_api_without_a_key_is_one_line_naming_the_variable() -> None:
    # "${OPENAI_API_KEY:}" unset is no key, not an empty one: refused before anything is sent
    with pytest.raises(
        ConfigurationError, match=r"^config error: no API key for https://api.openai.com/v1: set OPENAI_API_KEY"
    ):
        load_settings(CONFIG_DIR / "openai.yaml")


@pytest.mark.parametrize(("file", "var"), [("openai.yaml", "OPENAI_API_KEY"), ("anthropic.yaml", "ANTHROPIC_API_KEY")])
def test_provider_key_env_becomes_a_secret_api_key(monkeypatch: pytest.MonkeyPatch, file: str, var: str) -> None:
    monkeypatch.setenv(var, FAKE_KEY)
    settings = load_settings(CONFIG_DIR / file)

    assert isinstance(settings.llm.api_key, SecretStr)
    assert settings.llm.api_key.get_secret_value() == FAKE_KEY
    assert settings.secrets() == [FAKE_KEY]
    assert FAKE_KEY not in repr(settings)
    assert FAKE_KEY not in str(settings.model_dump())


def test_configured_key_is_redacted_from_the_event_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    log = tmp_path / "runs.jsonl"
    container = build_container(load_settings(CONFIG_DIR / "openai.yaml", {"log.path": str(log)}))

    assert container.secrets() == [FAKE_KEY]
    event_log = container.event_log()
    event_log.emit(rec("llm_error", message=f"401 for key {FAKE_KEY}"))
    event_log.close()
    text = log.read_text()
    assert FAKE_KEY not in text
    assert REDACTED in json.loads(text)["message"]


def test_relative_model_path_from_env_is_relative_to_the_working_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AEON_LOCAL_MODEL_PATH", "models/gemma.gguf")

    assert load_settings(None).llm.model_path in (Path("models/gemma.gguf"), tmp_path / "models" / "gemma.gguf")


def test_env_marker_without_a_default_must_be_set(tmp_path: Path) -> None:
    config = tmp_path / "aeon.yaml"
    config.write_text('llm:\n  adapter: scripted\n  model: "${AEON_TEST_UNSET_MODEL}"\n')

    with pytest.raises(ConfigurationError, match=str(config)):
        load_settings(config)


# -- base.yaml against the schema defaults --------------------------------------------------------------------------


def _base_entries(*, markers: bool) -> list[tuple[str, str, Any]]:
    """(section, key, value) for base.yaml's literal values, or for its `${VAR:default}` env markers."""
    raw = yaml.safe_load(BASE_CONFIG.read_text(encoding="utf-8"))
    return [
        (section, key, value)
        for section, body in raw.items()
        if section not in _TABLES
        for key, value in body.items()
        if (isinstance(value, str) and "${" in value) == markers
    ]


_TABLES = ("prices",)  # sections keyed by the user's own names (models), not by schema fields


@pytest.mark.parametrize("section", _TABLES)
def test_the_loaded_table_equals_the_settings_default(section: str) -> None:
    # base.yaml lists no prices: the provider registry's free models are the layer under it
    assert getattr(load_settings(None), section) == getattr(Settings(), section)


_KNOWN_DRIFT: dict[tuple[str, str], str] = {}


def _drift_case(section: str, key: str, value: Any) -> Any:
    reason = _KNOWN_DRIFT.get((section, key))
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(section, key, value, id=f"{section}.{key}", marks=marks)


@pytest.mark.parametrize(("section", "key", "value"), [_drift_case(*v) for v in _base_entries(markers=False)])
def test_base_yaml_value_equals_the_settings_default(section: str, key: str, value: Any) -> None:
    model: type[BaseModel] = type(getattr(Settings(), section))
    assert key in model.model_fields, f"base.yaml names {section}.{key}, which the schema lacks"
    assert getattr(model.model_validate({key: value}), key) == getattr(model(), key)


@pytest.mark.parametrize(
    ("section", "key"), [pytest.param(s, k, id=f"{s}.{k}") for s, k, _ in _base_entries(markers=True)]
)
def test_base_yaml_env_marker_default_equals_the_settings_default(
    section: str, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in SUITE_VARIABLES:  # the suite's conftest turns durable runs, the slot cache and the kept server off
        monkeypatch.delenv(name, raising=False)
    loaded = getattr(getattr(load_settings(None), section), key)
    assert loaded == getattr(getattr(Settings(), section), key)


# -- the local model's slot cache -----------------------------------------------------------------------------------


def test_the_slot_cache_folder_is_beside_the_model_cache_or_in_the_users_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aeon.adapters.llm.local_config import default_slot_cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_slot_cache_dir(tmp_path / "models") == tmp_path / "models" / "llama-slots"
    assert default_slot_cache_dir(None) == tmp_path / "xdg" / "aeon" / "llama-slots"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_slot_cache_dir(None) == tmp_path / "home" / ".cache" / "aeon" / "llama-slots"


def test_the_slot_cache_settings_reach_the_local_adapter_and_0_mb_turns_it_off(tmp_path: Path) -> None:
    from aeon.adapters.llm.local_config import from_settings

    config = tmp_path / "aeon.yaml"
    config.write_text(yaml.safe_dump({"llm": {"adapter": "local", "slot_cache_dir": "slots", "slot_cache_mb": 64}}))
    on = from_settings(load_settings(config).llm, logger=JsonlEventLog(None), status=None)
    off = from_settings(load_settings(config, {"llm.slot_cache_mb": 0}).llm, logger=JsonlEventLog(None), status=None)

    assert on._slot_cache_dir == tmp_path / "slots" and on._slot_cache_bytes == 64 * 2**20  # relative to the file
    assert off._slot_cache_dir is None
