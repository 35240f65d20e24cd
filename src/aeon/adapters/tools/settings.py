"""The `tools:` section of the settings schema (Python tool modules and MCP tool servers), and the tools built from
it: `build_tools` (the registry) and `open_tools` (the run's ToolPort, MCP servers started)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec
from pydantic import (
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from aeon.adapters.tools.a2a import MAX_RESPONSE_BYTES, A2AAgentConfig, A2ATools
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.composite import CompositeTools
from aeon.adapters.tools.loader import DEFAULT_IMPORT_TIMEOUT, load_tool_modules
from aeon.adapters.tools.mcp import McpServerConfig, McpTools, ToolFlags
from aeon.adapters.tools.mcp.config import DEFAULT_START_TIMEOUT
from aeon.adapters.tools.registry import DEFAULT_TIMEOUT, ToolRegistry
from aeon.application.redaction import Redactor
from aeon.application.settings_section import Section as _Section
from aeon.domain.tools import OUTPUT_CHECK, OutputCheck

# Aeon's tool-name rule (adapters/tools/registry.py), for MCP server names and tool name prefixes
NAME_RULE = r"^[A-Za-z0-9_-]{1,64}$"
PREFIX_RULE = r"^[A-Za-z0-9_-]{0,63}$"


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
    start_timeout: float = Field(
        DEFAULT_START_TIMEOUT, gt=0, description="seconds to start, initialize and list its tools"
    )
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


class A2AAgentSettings(_Section):
    """One remote A2A agent of `tools.a2a`: the tool `name`, the agent's base `url`, what the planner is told it does
    (`description`), `headers` sent with each request (credentials through ${VAR} markers)."""

    name: str = Field(pattern=NAME_RULE, description="the tool's name in plans, errors, `aeon tools` and records")
    url: str
    description: str = Field("", max_length=2000)
    headers: dict[str, SecretStr | None] = Field(default_factory=dict)  # a value left empty is not sent
    timeout: float | None = Field(None, gt=0, description="seconds per call; unset: tools.timeout")
    requires_approval: bool = False
    max_response_bytes: int = Field(MAX_RESPONSE_BYTES, gt=0, description="the most bytes a call may receive")

    @field_validator("url")
    @classmethod
    def _http(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return url


class ToolsSettings(_Section):
    builtins: bool = True
    modules: list[str] = Field(default_factory=list)
    # the most seconds one tool call may take (a tool's @tool(timeout=...) overrides it); run.max_seconds applies too
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0)
    # the most seconds importing one tools module may take (its top level is the user's code); run.max_seconds too
    import_timeout: float = Field(DEFAULT_IMPORT_TIMEOUT, gt=0)
    # tool name → whether each of its calls needs a person's approval (over what the tool itself says)
    approval: dict[str, bool] = Field(default_factory=dict)
    # an output that does not match its Python tool's return annotation: warn (keep it, say so), fail (the step), off
    output_check: OutputCheck = OUTPUT_CHECK
    # MCP tool servers whose tools join the registry's (README "MCP tool servers")
    mcp: list[McpServerSettings] = Field(default_factory=list)
    # remote Agent2Agent agents, each a tool (README "A2A")
    a2a: list[A2AAgentSettings] = Field(default_factory=list)

    @field_validator("mcp", "a2a")
    @classmethod
    def _names_differ(cls, entries: list[Any], info: ValidationInfo) -> list[Any]:
        names = [s.name for s in entries]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            what = "MCP server" if info.field_name == "mcp" else "A2A agent"
            raise ValueError(f"{what} names must differ: {', '.join(map(repr, twice))} given twice")
        return entries

    def key(self, config_dir: Path | None) -> str:
        """What tells two tool configurations apart (modules are looked for in `config_dir` first), the MCP servers'
        env and headers too, which the dump hides."""

        def shown(values: dict[str, Any]) -> dict[str, str | None]:
            return {k: v.get_secret_value() if v is not None else None for k, v in values.items()}

        opened = [[shown(s.env), shown(s.headers)] for s in self.mcp] + [[shown(a.headers)] for a in self.a2a]
        return hashlib.sha256(msgspec.json.encode([self.model_dump(mode="json"), str(config_dir), opened])).hexdigest()


def _has_userinfo(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL httpx would take either: its own error says so
        return False
    return parts.username is not None or parts.password is not None


def build_tools(tools: ToolsSettings, *, search: Sequence[Path] = (), max_seconds: float | None = None) -> ToolRegistry:
    """The registry: built-ins, then the tools of each module, each import bounded by tools.import_timeout and by
    run.max_seconds (importing is part of what the run's time cap promises to bound)."""
    registry = ToolRegistry(timeout=tools.timeout)
    if tools.builtins:
        register_builtins(registry)
    bound = min(tools.import_timeout, max_seconds) if max_seconds is not None else tools.import_timeout
    load_tool_modules(registry, tools.modules, search=search, import_timeout=bound)
    return registry


def open_tools(
    registry: ToolRegistry,
    tools: ToolsSettings,
    redactor: Redactor,
    *,
    max_seconds: float | None = None,
    status: Callable[[str], None] | None = None,
) -> Iterator[CompositeTools]:
    """The run's ToolPort: the registry's tools, then the tools of each MCP server of tools.mcp, which start here —
    when the tools are first needed, so `aeon --version` starts nothing — and stop when the container shuts down,
    or at interpreter exit for a container nobody shuts down (one that is only dropped leaves them running for
    whoever holds its tools). A server that cannot start is a ConfigurationError naming it; `status` hears which
    server tools were skipped and why."""
    bounds: dict[str, Any] = {"timeout": tools.timeout, "redactor": redactor}
    servers = McpTools([mcp_server(s) for s in tools.mcp], warn=status, **bounds)
    try:
        servers.start(start_limit=max_seconds)
        composite = CompositeTools(registry, servers, A2ATools([a2a_agent(a) for a in tools.a2a], **bounds))
        for name, needed in tools.approval.items():  # Python and MCP tools alike, over what each said
            composite.require_approval(name, needed)
    except BaseException:
        servers.close()
        raise
    try:
        yield composite
    except GeneratorExit:  # collected, not shut down: the tools may still be in use (run_scope's orchestrator)
        return
    servers.close()


def mcp_server(server: McpServerSettings) -> McpServerConfig:
    """One tools.mcp entry as the adapter's config, field by field; secrets opened here, for the server only."""
    return McpServerConfig(
        name=server.name,
        command=server.command,
        args=tuple(server.args),
        env={k: v.get_secret_value() for k, v in server.env.items() if v is not None},
        url=server.url,
        headers={k: v.get_secret_value() for k, v in server.headers.items() if v is not None},
        include=tuple(server.include) if server.include is not None else None,
        exclude=tuple(server.exclude),
        prefix=server.prefix,
        timeout=server.timeout,
        start_timeout=server.start_timeout,
        flags=ToolFlags(requires_approval=server.requires_approval, idempotent=server.idempotent),
        overrides={
            name: ToolFlags(requires_approval=f.requires_approval, idempotent=f.idempotent)
            for name, f in server.overrides.items()
        },
    )


def a2a_agent(agent: A2AAgentSettings) -> A2AAgentConfig:
    """One tools.a2a entry as the adapter's config; its headers opened here, for the agent only."""
    return A2AAgentConfig(
        name=agent.name,
        url=agent.url,
        description=agent.description,
        headers={k: v.get_secret_value() for k, v in agent.headers.items() if v is not None},
        timeout=agent.timeout,
        requires_approval=agent.requires_approval,
        max_response_bytes=agent.max_response_bytes,
    )
