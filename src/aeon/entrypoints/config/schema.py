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
from aeon.adapters.llm.settings import KeysSettings, LLMSettings
from aeon.adapters.telemetry.settings import OtelSettings
from aeon.adapters.tools.settings import ToolsSettings
from aeon.application.errors import ConfigurationError
from aeon.application.kernel.orchestrator import RunSettings
from aeon.application.policy import Policy, ServerRule, ToolRule
from aeon.application.settings_section import Section as _Section
from aeon.domain.evaluation import ConvergenceCriteria
from aeon.domain.ledger import ModelPrice
from aeon.entrypoints.config.sections import ConvergenceSettings, PolicySettings, PriceSettings, RunSection

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
        llm = self.llm
        provider = PROVIDERS[llm.adapter]
        for setting, why in provider.requires.items():
            if getattr(llm, setting) is None:
                raise ValueError(f"llm.{setting} is not set: {why}")
        if provider.base_url is None:  # no API of its own (local, scripted): nothing to fill
            return self
        url, model, key_var = provider.base_url, provider.model, provider.key_variable
        key = llm.api_key or getattr(self.keys, llm.adapter, None)
        filled = llm.model_copy(update={"base_url": llm.base_url or url, "model": llm.model or model, "api_key": key})
        if filled.base_url == url and key is None:
            raise ValueError(
                f"no API key for {url}: set {key_var} (or point AEON_LLM_BASE_URL at a server that needs none)"
            )
        object.__setattr__(self, "llm", filled)  # frozen: the validated tree is completed once, here
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


def model_overrides(model: str) -> dict[str, str]:
    """A model named as "provider:name" as llm settings: "openai:gpt-4o-mini", "anthropic:claude-haiku-5-5",
    "local" (or "local:/path/to/model.gguf"), "scripted:answers.yaml". Everything else about the model (endpoint,
    key, dialect) comes from the config and the environment, as for `llm.adapter`. Raises ConfigurationError."""
    provider, _, name = (part.strip() for part in model.partition(":"))
    if provider not in PROVIDERS:
        known = ", ".join(
            f"{p.name}:{'MODEL' if p.model_key == 'model' else p.model_key.upper()}" for p in PROVIDERS.values()
        )
        raise ConfigurationError(f"model {model!r}: unknown provider {provider!r} (use one of: {known})")
    return {"llm.adapter": provider, **({f"llm.{PROVIDERS[provider].model_key}": name} if name else {})}


def tool_folders(settings: Settings) -> list[Path]:
    """Where tools.modules are looked for first: the config file's folder, then the working directory."""
    return list(dict.fromkeys(d for d in (settings.config_dir, Path.cwd()) if d is not None))


def policy_of(section: PolicySettings) -> Policy:
    """The `policy:` section as the kernel reads it."""
    return Policy(
        enabled=section.enabled,
        untrusted_may_call=tuple(section.untrusted_may_call),
        tools={
            name: ToolRule(effect=t.effect, trusted_output=t.trusted_output, args=dict(t.args))
            for name, t in section.tools.items()
        },
        servers={n: ServerRule(trusted=s.trusted) for n, s in section.servers.items()},
    )


def kernel_settings(settings: Settings) -> RunSettings:
    """What the kernel needs of the validated settings, field by field (mypy checks each one)."""
    run, criteria = settings.run, settings.convergence
    return RunSettings(
        ttl=run.ttl,
        max_llm_calls=run.max_llm_calls,
        max_tokens=run.max_tokens,
        max_seconds=run.max_seconds,
        max_plan_steps=run.max_plan_steps,
        llm_max_tokens=settings.llm.max_tokens,
        context_window=settings.llm.context_window,
        evaluate=run.evaluate,
        ttl_given=run.ttl_given,
        approval_timeout=run.approval_timeout,
        output_check=settings.tools.output_check,
        max_cost=run.max_cost,
        prices={model: ModelPrice(**price.model_dump()) for model, price in settings.prices.items()},
        policy=policy_of(settings.policy),
        criteria=ConvergenceCriteria(
            min_completeness=criteria.min_completeness,
            min_coherence=criteria.min_coherence,
            max_severity=criteria.max_severity,
            require_consistency=criteria.require_consistency,
        ),
    )
