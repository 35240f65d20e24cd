"""The prompt profile of a model: from the provider registry, for the provider's own models or any other server
behind its wire, or from llm.profile; with the shortest prefix the provider's prompt cache keeps."""

from __future__ import annotations

import pytest

from aeon.adapters.llm.dialects import DIALECTS
from aeon.adapters.llm.local import LocalLlamaLLM
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.adapters.llm.providers import PROVIDERS, cache_minimum, prompt_profile
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.application.errors import ConfigurationError
from aeon.application.runs import describe_llm
from aeon.entrypoints.config.layers import load_settings


@pytest.mark.parametrize(
    ("base_url", "model", "profile", "minimum"),
    [
        ("https://api.openai.com/v1", "gpt-5.4-mini", "chat", 1024),  # OpenAI's own API: chat, cached from 1,024
        ("http://127.0.0.1:8080/v1", "gemma-3-270m", "base", None),  # llama-server: may serve a base model
        ("http://gpu:8000/v1", "Qwen/Qwen3-8B", "base", None),  # vLLM: unknown kind, no cache minimum
    ],
)
def test_an_openai_adapter_reports_the_profile_of_what_it_talks_to(
    base_url: str, model: str, profile: str, minimum: int | None
) -> None:
    info = OpenAICompatLLM(base_url, model, "sk-test").describe()
    assert (info.profile, info.cache_min_tokens) == (profile, minimum)
    assert info.profile_source.startswith("auto: ")


def test_llm_profile_overrides_the_provider_and_says_so() -> None:
    info = OpenAICompatLLM("http://127.0.0.1:8080/v1", "qwen3-chat", profile="chat").describe()
    assert (info.profile, info.profile_source) == ("chat", "llm.profile")
    assert info.fields()["profile"] == "chat"  # the run_start record names a profile other than base


def test_the_local_and_scripted_models_are_base_models_unless_told() -> None:
    assert LocalLlamaLLM().describe().profile == "base"
    assert LocalLlamaLLM(profile="tools").describe().profile == "tools"
    assert ScriptedLLM([]).describe().profile == "base"
    assert ScriptedLLM([], profile="chat").describe().profile == "chat"
    assert "profile" not in ScriptedLLM([]).describe().fields()  # a base run's record is as it always was


def test_every_provider_record_names_a_profile_and_hosted_ones_are_chat() -> None:
    assert {p.name: p.profile for p in PROVIDERS.values()} == {
        "local": "base",
        "openai": "chat",
        "anthropic": "chat",
        "scripted": "base",
    }
    # the provider's own dialects take its profile; a server of another kind behind the same wire is base
    assert prompt_profile("anthropic", DIALECTS["anthropic"], None)[0] == "chat"
    assert prompt_profile("anthropic", DIALECTS["anthropic-compatible"], None)[0] == "base"
    assert prompt_profile("openai", DIALECTS["ollama"], "chat") == ("chat", "llm.profile")
    # a dialect that sends no schema keeps the worked examples, whatever llm.profile says
    assert prompt_profile("anthropic", DIALECTS["anthropic-compatible"], "chat")[0] == "base"


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("claude-sonnet-4-5", 1024),
        ("claude-opus-4-1-20250805", 1024),
        ("claude-3-5-haiku-latest", 2048),
        ("claude-sonnet-4-6", 2048),
        ("claude-haiku-4-5", 4096),
        ("claude-opus-4-6", 4096),
        ("claude-haiku-5-5", 4096),  # not listed: the largest minimum, so no prefix is said cached that may not be
    ],
)
def test_anthropic_caches_a_prefix_from_a_minimum_that_depends_on_the_model(model: str, minimum: int) -> None:
    assert cache_minimum(DIALECTS["anthropic"], model) == minimum


def test_llm_profile_is_validated_and_blank_means_the_providers() -> None:
    assert load_settings(None, {"llm.profile": "chat"}).llm.profile == "chat"
    assert load_settings(None, {"llm.profile": " "}).llm.profile is None
    with pytest.raises(ConfigurationError, match=r"llm\.profile"):
        load_settings(None, {"llm.profile": "instruct"})


def test_aeon_run_s_first_line_names_a_profile_other_than_base() -> None:
    chat = OpenAICompatLLM("https://api.openai.com/v1", "gpt-4.1-mini", "sk-test").describe()
    assert describe_llm(chat).endswith("· chat prompts (auto: provider openai)")
    assert "prompts" not in describe_llm(OpenAICompatLLM("http://127.0.0.1:8080/v1", "gemma").describe())
