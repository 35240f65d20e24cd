"""The settings schema, as the front doors import it: it lives in entrypoints/config/ (schema.py, sections.py, tools.py,
validation.py) and in adapters/llm/settings.py (the `llm:` and `keys:` sections the provider registry builds from)."""

from __future__ import annotations

from aeon.adapters.llm.settings import KeysSettings, LLMSettings
from aeon.entrypoints.config.schema import MAX_SECONDS_BY_ADAPTER, Settings, model_overrides
from aeon.entrypoints.config.sections import (
    ConvergenceSettings,
    DurableSettings,
    LogSettings,
    OtelSettings,
    PriceSettings,
    RunSection,
)
from aeon.entrypoints.config.tools import McpServerSettings, McpToolFlags, ToolsSettings
from aeon.entrypoints.config.validation import validate_settings

__all__ = [
    "MAX_SECONDS_BY_ADAPTER",
    "ConvergenceSettings",
    "DurableSettings",
    "KeysSettings",
    "LLMSettings",
    "LogSettings",
    "McpServerSettings",
    "McpToolFlags",
    "OtelSettings",
    "PriceSettings",
    "RunSection",
    "Settings",
    "ToolsSettings",
    "model_overrides",
    "validate_settings",
]
