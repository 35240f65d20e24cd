"""The container speaks typed settings (no string config paths, no plain-text key in any provider) and owns the
log, the model client and the tracer: whatever way a run ends, each one it opened is closed exactly once."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest
from dependency_injector import providers
from free_records import rec
from pydantic import BaseModel, SecretStr

import aeon.entrypoints.config.layers as layers_module
from aeon.adapters.durable.composer import RunComposer
from aeon.adapters.durable.runtime import DurableRuntime, RunSpec
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.application.kernel.orchestrator import Orchestrator
from aeon.application.kernel.run import RunSettings
from aeon.application.tracing import NullTracer
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import MAX_SECONDS_BY_ADAPTER
from aeon.entrypoints.container import Container, build_container
from aeon.entrypoints.durable.factory import ContainerFactory

from cli_harness import CONFIG_DIR, REQUEST, SUM_STEP, assert_exit, invoke, plan_json, scripted_config

FAKE_KEY = "sk-test-not-a-real-key-1234"
pytestmark = pytest.mark.usefixtures("isolated_env")


def test_the_container_reads_no_string_config_paths() -> None:
    found = [p for p in Container().traverse() if isinstance(p, providers.Configuration)]
    assert found == []


def test_run_settings_defaults_are_the_shipped_base_config() -> None:
    """A test's RunSettings() is what `aeon run` gets from base.yaml (llm.max_tokens and the price table come from
    other sections, and run.max_seconds from the adapter: RunSettings() leaves them unset on purpose)."""
    shipped = build_container(load_settings(None)).run_settings()
    assert shipped.max_seconds == MAX_SECONDS_BY_ADAPTER["local"]
    assert msgspec.structs.replace(shipped, llm_max_tokens=None, prices={}, max_seconds=None) == RunSettings()


def _texts(value: Any, seen: set[int]) -> Iterator[str]:
    """Every plain string inside a provider argument: containers and pydantic models are walked; a SecretStr is the
    safe form of a key, and a provider is walked as a provider."""
    if id(value) in seen or isinstance(value, SecretStr | providers.Provider):
        return
    seen.add(id(value))
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _texts(k, seen)
            yield from _texts(v, seen)
    elif isinstance(value, list | tuple | set | frozenset):
        for v in value:
            yield from _texts(v, seen)
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _texts(getattr(value, name), seen)


def _arguments(provider: providers.Provider[Any]) -> Iterator[Any]:
    # looked up on the class: `settings.provided.llm` answers any attribute with a provider of its own
    if hasattr(type(provider), "args"):
        yield from provider.args
    if hasattr(type(provider), "kwargs"):
        yield from provider.kwargs.values()
    if isinstance(provider, providers.Object):
        yield provider.provides


@pytest.mark.parametrize("file", ["openai.yaml", "anthropic.yaml"])
def test_no_provider_argument_holds_the_api_key_as_plain_text(monkeypatch: pytest.MonkeyPatch, file: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    container = build_container(load_settings(CONFIG_DIR / file))
    every = [*container.traverse()]
    every += [o for p in list(every) for o in p.overridden]
    seen: set[int] = set()
    leaks = [p for p in every for arg in _arguments(p) for text in _texts(arg, seen) if FAKE_KEY in text]

    assert leaks == []
    assert container.llm_adapter().describe().adapter == file.removesuffix(".yaml")  # the key reached it
    container.shutdown_resources()  # the adapter's logger, the event log, was opened for it


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts, per kind, each log made and closed, each model client closed, each tracer shut down (by
    instance: `<kind> <id>`), wrapping the real methods."""
    counts: Counter[str] = Counter()

    def counting(cls: type, name: str, kind: str) -> None:
        real = getattr(cls, name)
        if asyncio.iscoroutinefunction(real):

            async def wrapped_async(self: Any, *args: Any, **kwargs: Any) -> Any:
                counts[f"{kind} {id(self)}"] += 1
                return await real(self, *args, **kwargs)

            monkeypatch.setattr(cls, name, wrapped_async)
        else:

            def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
                counts[f"{kind} {id(self)}"] += 1
                return real(self, *args, **kwargs)

            monkeypatch.setattr(cls, name, wrapped)

    counting(JsonlEventLog, "__init__", "log-made")
    counting(JsonlEventLog, "close", "log-close")
    counting(ScriptedLLM, "__init__", "llm-made")
    counting(ScriptedLLM, "aclose", "llm-close")
    counting(NullTracer, "shutdown", "tracer-shutdown")
    return counts


def _of(counts: Counter[str], kind: str) -> list[int]:
    return [n for key, n in counts.items() if key.startswith(kind + " ")]


def assert_each_closed_once(counts: Counter[str]) -> None:
    # only the logs this test made: one an earlier test left may be closed meanwhile, when its garbage is collected
    made = {key.split()[1] for key in counts if key.startswith("log-made ")}
    closed = [n for key, n in counts.items() if key.startswith("log-close ") and key.split()[1] in made]
    assert len(made) == len(closed) >= 1 and set(closed) == {1}, counts
    assert len(_of(counts, "llm-made")) == len(_of(counts, "llm-close")) >= 1, counts
    assert set(_of(counts, "llm-close")) == {1}, counts
    assert set(_of(counts, "tracer-shutdown")) <= {1}, counts


def test_a_cli_run_closes_log_model_and_tracer_once(tmp_path: Path, tally: Counter[str]) -> None:
    result = invoke("run", REQUEST, "--config", scripted_config(tmp_path, [plan_json(SUM_STEP), "15"]), "-q")

    assert_exit(result, 0)
    assert_each_closed_once(tally)
    assert _of(tally, "tracer-shutdown") == [1]


def test_a_cli_run_that_breaks_mid_run_still_closes_each_resource_once(
    tmp_path: Path, tally: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: Orchestrator, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the kernel broke")

    monkeypatch.setattr(Orchestrator, "run", broken)
    result = invoke("run", REQUEST, "--config", scripted_config(tmp_path, [plan_json(SUM_STEP), "15"]), "-q")

    assert result.exit_code != 0 and "the kernel broke" in result.stderr
    assert_each_closed_once(tally)
    assert _of(tally, "tracer-shutdown") == [1]


def _spec(tmp_path: Path) -> RunSpec:
    config = scripted_config(tmp_path, [plan_json(SUM_STEP), "15"])
    return RunSpec(run_id="r1", request=REQUEST, started_at="2025-01-01T00:00:00+00:00", config=str(config))


def _built(spec: RunSpec) -> Any:
    composer = RunComposer(ContainerFactory())
    return composer.build(spec, DurableRuntime(composer), rerun_unsafe=False, supplied=None)


def test_a_durable_run_closes_its_log_model_and_tracer_once(tmp_path: Path, tally: Counter[str]) -> None:
    async def scope() -> None:
        async with _built(_spec(tmp_path)) as built:
            built.log.emit(rec("checked"))

    asyncio.run(scope())
    assert_each_closed_once(tally)
    assert _of(tally, "tracer-shutdown") == [1]


def test_a_durable_run_that_raises_still_closes_each_resource_once(tmp_path: Path, tally: Counter[str]) -> None:
    async def scope() -> None:
        async with _built(_spec(tmp_path)):
            raise RuntimeError("the run broke")

    with pytest.raises(RuntimeError, match="the run broke"):
        asyncio.run(scope())
    assert_each_closed_once(tally)
    assert _of(tally, "tracer-shutdown") == [1]


def test_the_cli_config_layers_are_read_once_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: Counter[str] = Counter()
    real = layers_module.parse_yaml

    def counted(text: str, *, source: str) -> Any:
        reads[source] += 1
        return real(text, source=source)

    monkeypatch.setattr(layers_module, "parse_yaml", counted)
    config = scripted_config(tmp_path, ["x"])
    load_settings(config)
    assert sorted(reads.values()) == [1, 1] and any(str(config) in source for source in reads)  # base and the file
