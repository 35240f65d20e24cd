"""What the adapter knows of one MCP server: how to reach it, which of its tools to take, and how to flag them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT_START_TIMEOUT = 30.0


@dataclass(frozen=True, kw_only=True)
class ToolFlags:
    """Config overrides of what a tool's MCP annotations say; None leaves the annotation's verdict."""

    requires_approval: bool | None = None
    idempotent: bool | None = None


@dataclass(frozen=True, kw_only=True)
class McpServerConfig:
    """One entry of `tools.mcp`: a stdio server (`command`, `args`, `env`) or a streamable HTTP one (`url`,
    `headers`). `include`/`exclude`/`overrides` name the server's own tool names (before `prefix`). `env` and
    `headers` may hold credentials: they are never part of the repr."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    url: str | None = field(default=None, repr=False)  # may carry a password
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    prefix: str = ""
    timeout: float | None = None  # seconds per call; None: tools.timeout
    start_timeout: float = DEFAULT_START_TIMEOUT  # seconds to start, initialize and list the tools
    flags: ToolFlags = ToolFlags()  # for every tool of the server
    overrides: Mapping[str, ToolFlags] = field(default_factory=dict)  # per tool, over `flags`

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "streamable HTTP"
