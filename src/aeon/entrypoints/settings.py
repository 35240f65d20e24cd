"""The settings schema: base.yaml (package data), then --config, then ${VAR:default} markers, then CLI flags."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from aeon.adapters.eventlog.shrink import MIN_CAP
from aeon.adapters.llm.dialects import DIALECTS
from aeon.application.errors import ConfigurationError
from aeon.application.kernel.run import RunSettings
from aeon.application.plans.validation import MAX_PLAN_STEPS
from aeon.domain.evaluation import Severity
from aeon.domain.tools import OutputCheck

AdapterName = Literal["local", "openai", "anthropic", "scripted"]
# What `AEON_LLM_ADAPTER=openai|anthropic` means without a config file: the provider's own API and a current model.
PROVIDER_DEFAULTS = {
    "openai": ("https://api.openai.com/v1", "gpt-5.4-mini", "OPENAI_API_KEY"),
    "anthropic": ("https://api.anthropic.com", "claude-haiku-5-5", "ANTHROPIC_API_KEY"),
}
# What follows the colon of a "provider:name" model (aeon.run(model=…)): the llm setting it fills.
MODEL_NAME_KEYS: dict[str, str] = {"openai": "model", "anthropic": "model", "local": "model_path", "scripted": "script"}
# run.max_seconds when the config leaves it unset, by adapter, so that every run ends (README "Loops that always
# stop"): the default call cap (30) at what one call may take. A 270M local model on 2 busy cores answers in 10-30 s;
# a hosted model in seconds, a reasoning one up to ~20 s; a scripted one at once, its tools within tools.timeout (60).
# `max_seconds: null` in a config file: no time cap.
MAX_SECONDS_BY_ADAPTER: dict[str, float] = {"local": 900.0, "openai": 600.0, "anthropic": 600.0, "scripted": 120.0}
KIB = 1024
# Aeon's tool-name rule (adapters/tools/registry.py), for MCP server names and tool name prefixes
NAME_RULE = r"^[A-Za-z0-9_-]{1,64}$"
PREFIX_RULE = r"^[A-Za-z0-9_-]{0,63}$"
_RUN = RunSettings()  # the kernel's defaults: the one place they are written


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LLMSettings(_Section):
    adapter: AdapterName = "local"
    script: Path | None = None
    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    # the provider dialect (adapters/llm/dialects.py); unset: detected from base_url and model
    dialect: str | None = None
    anthropic_version: str = "2023-06-01"
    thinking_budget: int | None = Field(None, ge=1024, description="Anthropic extended thinking budget (tokens)")
    read_timeout: float = Field(120.0, gt=0)
    max_attempts: int = Field(3, ge=1, le=10)
    max_tokens: int = Field(512, ge=1)
    # tokens a prompt and its answer may take together (README "What the model sees"); unset: the adapter's own
    # (local: ctx_size; openai/anthropic: by dialect, 128,000 / 200,000 for the providers' own models, else 8,192)
    context_window: int | None = Field(None, ge=1024)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    # local adapter (llama.cpp's llama-server with Gemma 3 270M)
    model_path: Path | None = None
    cache_dir: Path | None = None
    # the local server's saved KV cache of the shared prompt prefix (README "Prompt caching"); unset: the default
    # folder (container.py); slot_cache_mb 0 keeps none
    slot_cache_dir: Path | None = None
    slot_cache_mb: int = Field(256, ge=0)
    ctx_size: int = Field(8192, ge=512)
    threads: int | None = Field(None, ge=1)
    startup_timeout: float = Field(120.0, gt=0)

    @field_validator(
        "api_key",
        "base_url",
        "model",
        "script",
        "model_path",
        "cache_dir",
        "slot_cache_dir",
        "dialect",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v

    @model_validator(mode="after")
    def _dialect_fits_adapter(self) -> LLMSettings:
        if self.dialect is None or self.adapter == "scripted":
            return self
        wire = "anthropic" if self.adapter == "anthropic" else "openai"
        dialect = DIALECTS.get(self.dialect)
        if dialect is None or dialect.wire != wire:
            names = ", ".join(d.name for d in DIALECTS.values() if d.wire == wire)
            raise ValueError(f"dialect {self.dialect!r} does not fit adapter {self.adapter!r} (use one of: {names})")
        return self


class RunSection(_Section):
    """The `run:` section; its defaults are the kernel's own (RunSettings()), so a test's run is production's."""

    ttl: int = Field(_RUN.ttl, ge=0, description="passes of the multi-pass loop")
    max_llm_calls: int = Field(_RUN.max_llm_calls, ge=0)
    max_tokens: int | None = Field(_RUN.max_tokens, ge=1)
    max_seconds: float | None = Field(_RUN.max_seconds, gt=0)
    # USD for the whole run, priced from `prices`; each call's worst case is checked before it is sent
    max_cost: float | None = Field(_RUN.max_cost, gt=0)
    # what the model is asked to stay under; hand-written plans (--plan) are bound only by MAX_PLAN_STEPS
    max_plan_steps: int = Field(_RUN.max_plan_steps, ge=1, le=MAX_PLAN_STEPS)
    evaluate: bool = Field(_RUN.evaluate, description="False: one plan → execute pass without profile or evaluation")
    # true (what --ttl sets): with a given plan (--plan) no profiling call is made and the TTL is used as given
    ttl_given: bool = _RUN.ttl_given
    # seconds a tool call that needs approval waits for a person's decision; past it the run ends approval_expired
    approval_timeout: float = Field(_RUN.approval_timeout, gt=0)


class ConvergenceSettings(_Section):
    min_completeness: float = Field(_RUN.criteria.min_completeness, ge=0.0, le=1.0)
    min_coherence: float = Field(_RUN.criteria.min_coherence, ge=0.0, le=1.0)
    max_severity: Severity = _RUN.criteria.max_severity
    require_consistency: bool = _RUN.criteria.require_consistency


class PriceSettings(_Section):
    """USD per million tokens for one model; cached input tokens cost `input` when `cached_input` is not given."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)


class OtelSettings(_Section):
    """OpenTelemetry traces and the token-usage metric (needs the [otel] extra); off by default."""

    enabled: bool = False
    exporter: Literal["console", "otlp"] = "console"
    # OTLP over HTTP: the collector's base URL (…/v1/traces and …/v1/metrics are added); empty: the OTEL_* env vars
    endpoint: str | None = None
    service_name: str = "aeon"
    capture_content: bool = Field(False, description="put prompt and answer text on the chat spans")

    @field_validator("endpoint", mode="before")
    @classmethod
    def _blank_is_unset(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v


class McpToolFlags(_Section):
    """Overrides of what a tool's MCP annotations say (README "MCP tool servers"); unset: the annotation decides."""

    requires_approval: bool | None = None
    idempotent: bool | None = None


class McpServerSettings(McpToolFlags):
    """One MCP server of `tools.mcp`: `command` (+ `args`, `env`) runs it over stdio, or `url` (+ `headers`) reaches
    it over streamable HTTP. `include`/`exclude`/`overrides` name the server's own tool names; `prefix` is put
    before each of them; `requires_approval`/`idempotent` set every tool's flag, `overrides` one tool's."""

    name: str = Field(pattern=NAME_RULE, description="names the server in errors, `aeon tools` and records")
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, SecretStr | None] = Field(default_factory=dict)  # a value left empty by its ${VAR:} is not set
    url: str | None = None
    headers: dict[str, SecretStr | None] = Field(default_factory=dict)  # a value left empty is not sent
    include: list[str] | None = None
    exclude: list[str] = Field(default_factory=list)
    prefix: str = Field("", pattern=PREFIX_RULE)
    timeout: float | None = Field(None, gt=0, description="seconds per call; unset: tools.timeout")
    start_timeout: float = Field(30.0, gt=0, description="seconds to start, initialize and list its tools")
    overrides: dict[str, McpToolFlags] = Field(default_factory=dict)

    @field_validator("command", "url", mode="before")
    @classmethod
    def _blank_is_unset(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        # the error's location names the server (validate_settings)
        if self.command is not None and self.url is not None:
            raise ValueError("both command (stdio) and url (streamable HTTP) given: give one of them")
        if self.command is None and self.url is None:
            raise ValueError("neither command (stdio) nor url (streamable HTTP) given: give one of them")
        if self.url is not None and (self.args or self.env):
            raise ValueError("args and env are for a command (stdio), and this server has a url")
        if self.command is not None and self.headers:
            raise ValueError("headers are for a url (streamable HTTP), and this server has a command")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        # httpx would turn the URL's user:password into an Authorization header over the configured one: refuse,
        # rather than send one of two credentials the user gave (the message quotes neither)
        sent = {name.lower() for name, value in self.headers.items() if value is not None}
        if self.url is not None and "authorization" in sent and _has_userinfo(self.url):
            raise ValueError(
                "url carries a user and password and headers carries an Authorization header: give the credential "
                "one way (the url's would replace the header)"
            )
        return self


class ToolsSettings(_Section):
    builtins: bool = True
    modules: list[str] = Field(default_factory=list)
    # the most seconds one tool call may take (a tool's @tool(timeout=...) overrides it); run.max_seconds applies too
    timeout: float = Field(60.0, gt=0)
    # the most seconds importing one tools module may take (its top level is the user's code); run.max_seconds too
    import_timeout: float = Field(30.0, gt=0)
    # tool name → whether each of its calls needs a person's approval (over what the tool itself says)
    approval: dict[str, bool] = Field(default_factory=dict)
    # an output that does not match its Python tool's return annotation: warn (keep it, say so), fail (the step), off
    output_check: OutputCheck = _RUN.output_check
    # MCP tool servers whose tools join the registry's (README "MCP tool servers")
    mcp: list[McpServerSettings] = Field(default_factory=list)

    @field_validator("mcp")
    @classmethod
    def _names_differ(cls, servers: list[McpServerSettings]) -> list[McpServerSettings]:
        names = [s.name for s in servers]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"MCP server names must differ: {', '.join(map(repr, twice))} given twice")
        return servers


class LogSettings(_Section):
    path: Path | None = Path(".aeon/runs.jsonl")
    # Texts of 1 KiB or more are written once per log; a repeat is a marker naming the record that holds the copy.
    max_string_bytes: int = Field(256 * KIB, ge=MIN_CAP, description="a text's first copy is cut past this")
    max_record_bytes: int = Field(1024 * KIB, ge=MIN_CAP, description="a record's largest texts are cut past this")
    rotate_bytes: int | None = Field(100 * 1024 * KIB, ge=MIN_CAP, description="rotate past this; null: never")
    keep: int = Field(5, ge=1, description="backups kept when rotating: runs.jsonl.1 (newest) … runs.jsonl.N")

    @field_validator("path", mode="before")
    @classmethod
    def _blank_is_off(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v


class KeysSettings(_Section):
    """API keys by provider, read from their usual environment variables by the base config."""

    openai: SecretStr | None = None
    anthropic: SecretStr | None = None

    @field_validator("openai", "anthropic", mode="before")
    @classmethod
    def _blank_is_unset(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v


class DurableSettings(_Section):
    """Durable runs on DBOS: `enabled` (the default) makes `aeon run` durable (false, or --no-durable: not);
    `database_url` is the system database (empty: SQLite at .aeon/aeon.sqlite; a postgresql:// URL for workers on
    several hosts);
    `recover_after_seconds`: how long a batch or worker process may go unheard before a live one takes its runs;
    `defer_answers_under`: LLM answers that came within these seconds in all (a scripted model, a cache) are written
    with the run's next written step rather than one by one (0: every answer at once)."""

    enabled: bool = True
    database_url: str | None = None
    recover_after_seconds: float = Field(default=60.0, gt=0)
    defer_answers_under: float = Field(default=0.02, ge=0)

    @field_validator("database_url", mode="before")
    @classmethod
    def _blank_is_default(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v


class Settings(_Section):
    llm: LLMSettings = LLMSettings()
    keys: KeysSettings = KeysSettings()
    run: RunSection = RunSection()
    tools: ToolsSettings = ToolsSettings()
    log: LogSettings = LogSettings()
    convergence: ConvergenceSettings = ConvergenceSettings()
    durable: DurableSettings = DurableSettings()
    # USD per million tokens by model; the local and the scripted model cost nothing
    prices: dict[str, PriceSettings] = Field(
        default_factory=lambda: {
            "gemma-3-270m": PriceSettings(input=0.0, output=0.0),
            "scripted": PriceSettings(input=0.0, output=0.0),
        }
    )
    otel: OtelSettings = OtelSettings()
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
        if llm.adapter == "scripted" and llm.script is None:
            raise ValueError(
                "llm.script is not set: the scripted adapter answers from a YAML file of responses "
                "(set llm.script in a --config file, or AEON_LLM_SCRIPT)"
            )
        if llm.adapter not in PROVIDER_DEFAULTS:
            return self
        url, model, key_var = PROVIDER_DEFAULTS[llm.adapter]
        key = llm.api_key or getattr(self.keys, llm.adapter)
        filled = llm.model_copy(update={"base_url": llm.base_url or url, "model": llm.model or model, "api_key": key})
        if filled.base_url == url and key is None:
            raise ValueError(
                f"no API key for {url}: set {key_var} (or point AEON_LLM_BASE_URL at a server that needs none)"
            )
        object.__setattr__(self, "llm", filled)  # frozen: the validated tree is completed once, here
        return self

    @model_validator(mode="after")
    def _time_cap_by_adapter(self) -> Settings:
        """run.max_seconds left unset is the adapter's default (MAX_SECONDS_BY_ADAPTER); an explicit null is none."""
        if "max_seconds" not in self.run.model_fields_set:
            run = self.run.model_copy(update={"max_seconds": MAX_SECONDS_BY_ADAPTER[self.llm.adapter]})
            object.__setattr__(self, "run", run)  # frozen: the validated tree is completed once, here
        return self

    def secrets(self) -> list[str]:
        keys = (self.llm.api_key, self.keys.openai, self.keys.anthropic)
        return sorted({k.get_secret_value() for k in keys if k is not None and k.get_secret_value()})


def validate_settings(
    data: dict[str, Any],
    *,
    sources: str,
    config_dir: Path | None = None,
    env_notes: Mapping[tuple[str | int, ...], str] | None = None,
    hidden: Sequence[str] = (),
    env_secrets: Sequence[str] = (),
) -> Settings:
    """Validate the merged config tree once; every problem, each naming its key, becomes one ConfigurationError line.

    `env_notes` says, by key path, which environment variables a value came from (the error names them); no text
    in `hidden` (values of secret-named variables) is ever quoted. `env_secrets` are the values environment markers
    put into MCP servers' env and headers: secrets, whatever their variables' names (Settings.env_secrets).
    """
    try:
        settings = Settings.model_validate(data)
        settings._config_dir = config_dir
        settings._env_secrets = tuple(env_secrets)
        return settings
    except ValidationError as exc:
        problems = [_problem(err, env_notes or {}, data) for err in exc.errors()]
        if len(problems) == 1:
            text = f"config error {problems[0]}" if problems[0].startswith("at ") else f"config error: {problems[0]}"
        else:
            text = f"{len(problems)} config errors: {'; '.join(problems)}"
        for secret in hidden:
            text = text.replace(secret, "[hidden]")
        raise ConfigurationError(f"{text} [from {sources}]") from None  # the cause would repeat the inputs, secrets too


def _problem(err: Any, env_notes: Mapping[tuple[str | int, ...], str], data: Mapping[str, Any]) -> str:
    """One validation error as `at key.path: what (from the environment: VAR=…)`; a whole-tree check (no key)
    speaks for itself, and a check of our own says what it says (without pydantic's "Value error, ")."""
    if err["type"] == "value_error" and not err["loc"]:
        return str(err["ctx"]["error"])
    loc = tuple(err["loc"])
    where = ".".join(str(p) for p in loc) or "(root)"
    what = "unknown key" + _did_you_mean(loc) if err["type"] == "extra_forbidden" else err["msg"]
    if err["type"] == "value_error":
        what = str(err["ctx"]["error"])
    # a union adds the tried type to the path: the value's own path is the longest one that starts it
    note = next((env_notes[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in env_notes), None)
    return f"at {where}{_server_named(loc, data)}: {what}" + (f" ({note})" if note else "")


def _has_userinfo(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL httpx would take either: its own error says so
        return False
    return parts.username is not None or parts.password is not None


def _did_you_mean(loc: tuple[Any, ...]) -> str:
    """` (did you mean 'script'?)` for an unknown key close to one the section it sits in knows; else ""."""
    section = _section_at(loc[:-1])
    if section is None or not isinstance(loc[-1], str):
        return ""
    known = [field.alias or name for name, field in section.model_fields.items()]
    close = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _section_at(path: tuple[Any, ...]) -> type[BaseModel] | None:
    """The settings model at a key path (a list index or a dict key inside it steps over its container)."""
    section: type[BaseModel] = Settings
    inside_container = False
    for part in path:
        if inside_container:  # the index of a list of sections, or a key of a dict of them
            inside_container = False
            continue
        field = section.model_fields.get(part) if isinstance(part, str) else None
        if field is None:
            return None
        found = _model_in(field.annotation)
        if found is None:
            return None
        section, inside_container = found
    return None if inside_container else section


def _model_in(annotation: Any) -> tuple[type[BaseModel], bool] | None:
    """The settings model an annotation holds, and whether it holds it in a container (list, dict); else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return next((found for arg in args if (found := _model_in(arg)) is not None), None)
    if origin in (list, dict) and args:
        found = _model_in(args[-1])
        return None if found is None or found[1] else (found[0], True)
    return None


def _server_named(loc: tuple[Any, ...], data: Mapping[str, Any]) -> str:
    """` (MCP server 'name')` for a location inside one of tools.mcp, by its name when it has one; else ""."""
    if len(loc) < 3 or loc[:2] != ("tools", "mcp") or not isinstance(loc[2], int):
        return ""
    tools = data.get("tools")
    servers = tools.get("mcp") if isinstance(tools, Mapping) else None
    server = servers[loc[2]] if isinstance(servers, list) and 0 <= loc[2] < len(servers) else None
    name = server.get("name") if isinstance(server, Mapping) else None
    return f" (MCP server {name!r})" if isinstance(name, str) and name else ""


def model_overrides(model: str) -> dict[str, str]:
    """A model named as "provider:name" as llm settings: "openai:gpt-4o-mini", "anthropic:claude-haiku-5-5",
    "local" (or "local:/path/to/model.gguf"), "scripted:answers.yaml". Everything else about the model (endpoint,
    key, dialect) comes from the config and the environment, as for `llm.adapter`. Raises ConfigurationError."""
    provider, _, name = (part.strip() for part in model.partition(":"))
    if provider not in MODEL_NAME_KEYS:
        known = ", ".join(f"{p}:{'MODEL' if k == 'model' else k.upper()}" for p, k in MODEL_NAME_KEYS.items())
        raise ConfigurationError(f"model {model!r}: unknown provider {provider!r} (use one of: {known})")
    return {"llm.adapter": provider, **({f"llm.{MODEL_NAME_KEYS[provider]}": name} if name else {})}
