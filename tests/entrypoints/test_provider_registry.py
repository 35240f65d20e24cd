"""One provider record: a provider listed in adapters/llm/providers.py is accepted by the settings, built by the
container and priced, with nothing else to edit (a new provider is its record and its adapter module)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
from typing import Any

import pytest

from aeon.adapters.llm.providers import PROVIDERS, Provider
from aeon.adapters.llm.settings import LLMSettings, model_overrides
from aeon.application.errors import ConfigurationError
from aeon.application.ports import LLMPort
from aeon.domain.ledger import price_of
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import kernel_settings
from aeon.entrypoints.container import build_container
from aeon.testing import FunctionLLM

from cli_harness import CONFIG_DIR

pytestmark = pytest.mark.usefixtures("isolated_env")
FAKE_KEY = "sk-test-not-a-real-key-1234"
# what the part after "name:" is, by the setting it fills: a script file, the local model file (none: the default)
NAMED = {"script": str(CONFIG_DIR / "scripts" / "simple-request.yaml"), "model_path": "", "model": ""}


def _settings(provider: Provider, monkeypatch: pytest.MonkeyPatch, **mapping: Any) -> Any:
    if provider.key_variable:
        monkeypatch.setenv(provider.key_variable, FAKE_KEY)
    name = NAMED[provider.model_key]
    return load_settings(None, model_overrides(f"{provider.name}:{name}" if name else provider.name), mapping=mapping)


@pytest.mark.parametrize("provider", list(PROVIDERS.values()), ids=list(PROVIDERS))
def test_every_registered_provider_is_accepted_built_and_priced(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(provider, monkeypatch)
    assert settings.llm.adapter == provider.name
    assert settings.run.max_seconds == provider.max_seconds

    llm = build_container(settings).llm_adapter()
    info = llm.describe()
    assert isinstance(llm, LLMPort) and info.adapter == provider.name
    if provider.base_url is not None:  # the provider's own API, its current model, its key; named as itself
        assert (info.base_url, info.model, info.provider) == (provider.base_url, provider.model, provider.name)
        assert settings.llm.api_key is not None and settings.llm.api_key.get_secret_value() == FAKE_KEY

    if provider.pricing == "free":
        price = price_of(kernel_settings(settings).prices, info.model)
        assert price is not None and price.cost(1_000_000, 1_000_000) == 0
    else:  # priced from the config's `prices`, by the model name the adapter reports
        assert price_of(kernel_settings(settings).prices, info.model) is None  # never a guess
        priced = _settings(provider, monkeypatch, prices={info.model: {"input": 1.0, "output": 2.0}})
        price = price_of(kernel_settings(priced).prices, info.model)
        assert price is not None and price.cost(1_000_000, 1_000_000) == 3.0
    asyncio.run(llm.aclose())


BUILT: list[LLMPort] = []


def build_echo(llm: Any, *, logger: Any, status: Any) -> LLMPort:
    """The builder of a provider that exists only in this test: a model answering "ok"."""
    BUILT.append(FunctionLLM(lambda call: "ok", name=llm.model or "echo-1"))
    return BUILT[-1]


def test_a_provider_added_to_the_registry_alone_is_accepted_built_and_priced(monkeypatch: pytest.MonkeyPatch) -> None:
    echo = Provider(
        name="echo", builder=f"{__name__}:build_echo", pricing="free", free_models=("echo-1",), max_seconds=42.0
    )
    monkeypatch.setitem(PROVIDERS, "echo", echo)
    BUILT.clear()

    settings = load_settings(None, model_overrides("echo"))
    assert settings.run.max_seconds == 42.0
    assert build_container(settings).llm_adapter() is BUILT[0]
    price = price_of(kernel_settings(settings).prices, BUILT[0].describe().model)
    assert price is not None and price.cost(1_000, 1_000) == 0
    assert load_settings(None, model_overrides("echo:echo-2")).llm.model == "echo-2"


def test_a_provider_the_registry_does_not_list_is_refused_naming_the_ones_it_does() -> None:
    with pytest.raises(ConfigurationError, match=re.escape("at llm.adapter: Input should be 'local', 'openai'")):
        load_settings(None, {"llm.adapter": "echo"})
    with pytest.raises(ConfigurationError, match="unknown provider 'echo'"):
        model_overrides("echo:x")


@pytest.mark.parametrize("module", ["openai_compat:OpenAICompatLLM", "anthropic:AnthropicLLM", "local:LocalLlamaLLM"])
def test_an_adapter_built_without_a_setting_takes_the_settings_default(module: str) -> None:
    """One default per setting: an adapter made in code (a test, an embedding program) gets what `aeon run` gets."""
    name, cls = module.split(":")
    adapter = getattr(importlib.import_module(f"aeon.adapters.llm.{name}"), cls)
    defaults = LLMSettings()
    params = inspect.signature(adapter).parameters
    shared = [p for p in params.values() if p.name in LLMSettings.model_fields and p.default is not p.empty]
    assert shared, "the adapter takes llm settings"
    assert {p.name: p.default for p in shared} == {p.name: getattr(defaults, p.name) for p in shared}
