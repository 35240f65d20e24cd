"""llm.context_window: set in the config it reaches the kernel; unset, each adapter reports its own window (the local
server's -c, a hosted provider's models by dialect, 8192 for a server of unknown size)."""

from __future__ import annotations

import pytest

from aeon.application.errors import ConfigurationError
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import kernel_settings
from aeon.entrypoints.container import build_container

pytestmark = pytest.mark.usefixtures("isolated_env")


def test_a_configured_context_window_reaches_the_kernel() -> None:
    settings = load_settings(None, {"llm.context_window": 32768})
    assert kernel_settings(settings).context_window == 32768
    assert kernel_settings(load_settings(None)).context_window is None  # unset: the adapter's own


def test_a_context_window_too_small_to_hold_a_prompt_is_a_config_error() -> None:
    with pytest.raises(ConfigurationError, match=r"context_window"):
        load_settings(None, {"llm.context_window": 100})


def test_the_local_adapter_reports_its_server_context_size() -> None:
    settings = load_settings(None, {"llm.ctx_size": 16384})
    assert build_container(settings).llm_adapter().describe().context_window == 16384


@pytest.mark.parametrize(
    ("adapter", "base_url", "model", "window"),
    [
        ("openai", "https://api.openai.com/v1", "gpt-4.1-mini", 128000),
        ("openai", "http://127.0.0.1:8080/v1", "gemma-3-270m", 8192),  # a llama-server of unknown size
        ("anthropic", "https://api.anthropic.com", "claude-haiku-5-5", 200000),
    ],
)
def test_hosted_adapters_report_their_dialects_window(
    monkeypatch: pytest.MonkeyPatch, adapter: str, base_url: str, model: str, window: int
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-1234")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key-1234")
    settings = load_settings(None, {"llm.adapter": adapter, "llm.base_url": base_url, "llm.model": model})
    assert build_container(settings).llm_adapter().describe().context_window == window
