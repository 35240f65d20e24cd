"""The settings schema's root: base.yaml (package data), then --config, then ${VAR:default} markers, then CLI
flags, validated into one `Settings` (config/layers.py merges the layers, config/validation.py words the errors)."""

from __future__ import annotations

from pathlib import Path

from pydantic import (
    Field,
    PrivateAttr,
    model_validator,
)

from aeon.adapters.durable.settings import DurableSettings
from aeon.adapters.eventlog.settings import LogSettings
from aeon.adapters.llm.providers import PROVIDERS
from aeon.adapters.llm.settings import KeysSettings, LLMSettings, completed
from aeon.adapters.telemetry.settings import OtelSettings
from aeon.adapters.tools.settings import ToolsSettings
from aeon.application.kernel.orchestrator import RunSettings
from aeon.application.kernel.sections import (
    ConvergenceSettings,
    PolicySettings,
    PriceSettings,
    RunSection,
    run_settings,
)
from aeon.application.runs.serving import ServeSettings
from aeon.application.settings_section import Section as _Section

# run.max_seconds when the config leaves it unset, by adapter (the registry's), so that every run ends (README "Loops
# that always stop"); `max_seconds: null` in a config file: no time cap.
MAX_SECONDS_BY_ADAPTER: dict[str, float] = {p.name: p.max_seconds for p in PROVIDERS.values()}


def free_prices() -> dict[str, PriceSettings]:
    """The models that cost nothing, by the registry (the local model, the scripted one): priced at 0."""
    return {m: PriceSettings(input=0.0, output=0.0) for p in PROVIDERS.values() for m in p.free_models}


class Settings(_Section):
    llm: LLMSettings = LLMSettings()
    keys: KeysSettings = KeysSettings()
    run: RunSection = RunSection()
    tools: ToolsSettings = ToolsSettings()
    log: LogSettings = LogSettings()
    convergence: ConvergenceSettings = ConvergenceSettings()
    durable: DurableSettings = DurableSettings()
    # USD per million tokens by model; the free models of the registry (local, scripted) cost nothing
    prices: dict[str, PriceSettings] = Field(default_factory=free_prices)
    otel: OtelSettings = OtelSettings()
    policy: PolicySettings = PolicySettings()
    serve: ServeSettings = ServeSettings()
    _config_dir: Path | None = PrivateAttr(None)
    _env_secrets: tuple[str, ...] = PrivateAttr(())

    @property
    def config_dir(self) -> Path | None:
        """The folder of the --config file (None without one): tools.modules are looked for there first."""
        return self._config_dir

    @property
    def env_secrets(self) -> tuple[str, ...]:
        """What environment markers put into MCP servers' `env` and `headers`: secrets whatever their names."""
        return self._env_secrets

    @model_validator(mode="after")
    def _adapter_has_what_it_needs(self) -> Settings:
        """Fill a provider adapter's endpoint, model and key from the defaults; name what is missing, one line."""
        object.__setattr__(self, "llm", completed(self.llm, self.keys))  # frozen: the tree is completed once, here
        return self

    @model_validator(mode="after")
    def _time_cap_by_adapter(self) -> Settings:
        """run.max_seconds left unset is its provider's (the registry's max_seconds); an explicit null is none."""
        if "max_seconds" not in self.run.model_fields_set:
            run = self.run.model_copy(update={"max_seconds": PROVIDERS[self.llm.adapter].max_seconds})
            object.__setattr__(self, "run", run)  # frozen: the validated tree is completed once, here
        return self

    def secrets(self) -> list[str]:
        keys = (self.llm.api_key, *(getattr(self.keys, name) for name in type(self.keys).model_fields))
        return sorted({k.get_secret_value() for k in keys if k is not None and k.get_secret_value()})


def tool_folders(settings: Settings) -> list[Path]:
    """Where tools.modules are looked for first: the config file's folder, then the working directory."""
    return list(dict.fromkeys(d for d in (settings.config_dir, Path.cwd()) if d is not None))


def kernel_settings(settings: Settings) -> RunSettings:
    """What the kernel needs of the validated settings (application/kernel/sections.py)."""
    llm = settings.llm
    return run_settings(
        settings.run, settings.convergence, settings.prices,
        llm_max_tokens=llm.max_tokens, context_window=llm.context_window, output_check=settings.tools.output_check,
        policy=settings.policy,
    )  # fmt: skip
