"""A server's `tools/list` as Aeon ToolSpecs: include/exclude, the prefix, Aeon's name rule, annotations as flags."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aeon.adapters.tools.mcp.config import McpServerConfig
from aeon.adapters.tools.registry import check_spec
from aeon.application.errors import ConfigurationError, ToolRegistrationError
from aeon.domain.provenance import Effect
from aeon.domain.tools import ToolSpec

# Every tool is in every planning prompt: a server may add this many (after include/exclude), each this big.
MAX_TOOLS = 128
MAX_DESCRIPTION = 2000
MAX_TOOL_BYTES = 64 * 1024


@dataclass(frozen=True)
class Catalog:
    """The tools a server adds: their specs, the server's own name behind each Aeon name, and the tools skipped."""

    specs: list[ToolSpec] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def annotated_flags(annotations: Mapping[str, Any] | None) -> tuple[bool, bool]:
    """(idempotent, requires_approval) from a tool's MCP annotations, read with the spec's defaults.

    The spec's defaults when a hint is absent: readOnlyHint false, destructiveHint true, idempotentHint false; the
    destructive and idempotent hints mean something only when the tool is not read-only. So a read-only tool is safe
    to run again and needs no approval; any other tool needs approval unless it says `destructiveHint: false`, and is
    safe to run again only with `idempotentHint: true`. A tool with no annotations at all needs approval.
    """
    hints = annotations or {}
    read_only = hints.get("readOnlyHint") is True
    idempotent = read_only or hints.get("idempotentHint") is True
    destructive = not read_only and hints.get("destructiveHint") is not False
    return idempotent, destructive


def annotated_effect(annotations: Mapping[str, Any] | None) -> Effect | None:
    """The effect a tool's MCP annotations seed: readOnlyHint → read, openWorldHint → external, destructiveHint →
    write; None (undeclared: consequential) without any of them."""
    hints = annotations or {}
    if hints.get("readOnlyHint") is True:
        return Effect.READ
    if hints.get("openWorldHint") is True:
        return Effect.EXTERNAL
    return Effect.WRITE if hints.get("destructiveHint") is True else None


def catalog(config: McpServerConfig, listed: Sequence[Mapping[str, Any]]) -> Catalog:
    """The Aeon tools of `config`'s server from what it listed. A listed tool that cannot be an Aeon tool (its name
    with the prefix breaks the name rule, a schema is not valid, it is too big) is skipped with a warning, unless
    `include` names it: then, like an include, exclude or override naming a tool the server does not list, it is a
    ConfigurationError naming the server."""
    server = config.name
    offered = [str(tool.get("name")) for tool in listed]
    for key, names in (("include", config.include or ()), ("exclude", config.exclude), ("overrides", config.overrides)):
        unknown = sorted(set(names) - set(offered))
        if unknown:
            raise ConfigurationError(
                f"tools.mcp server {server!r}: {key} names {', '.join(map(repr, unknown))}, which the server does not "
                f"list (it lists: {', '.join(offered) or 'no tools'})"
            )
    out = Catalog()
    for tool in listed:
        own = str(tool.get("name"))
        if own in config.exclude or (config.include is not None and own not in config.include):
            continue
        try:
            spec = _spec(config, tool)
        except ToolRegistrationError as exc:
            if config.include is not None:
                raise ConfigurationError(f"tools.mcp server {server!r}: cannot include {exc}") from None
            out.warnings.append(f"MCP server {server!r}: skipped {exc}")
            continue
        if spec.name in out.names:
            raise ConfigurationError(f"tools.mcp server {server!r} lists tool {own!r} twice")
        out.specs.append(spec)
        out.names[spec.name] = own
    if len(out.specs) > MAX_TOOLS:
        raise ConfigurationError(
            f"tools.mcp server {server!r} offers {len(out.specs)} tools; at most {MAX_TOOLS} go into a plan's prompt: "
            "choose them with include or exclude"
        )
    return out


def _spec(config: McpServerConfig, tool: Mapping[str, Any]) -> ToolSpec:
    """The ToolSpec of one listed tool; raises ToolRegistrationError saying why it cannot be one."""
    own = str(tool.get("name"))
    size = len(json.dumps(tool))
    if size > MAX_TOOL_BYTES:
        raise ToolRegistrationError(f"tool {own!r}: its listing takes {size} bytes (at most {MAX_TOOL_BYTES})")
    input_schema = tool.get("inputSchema")
    if not isinstance(input_schema, dict):
        raise ToolRegistrationError(f"tool {own!r}: its inputSchema is not a JSON object")
    idempotent, approval = annotated_flags(tool.get("annotations"))
    for flags in (config.flags, config.overrides.get(own)):
        if flags is not None:
            approval = approval if flags.requires_approval is None else flags.requires_approval
            idempotent = idempotent if flags.idempotent is None else flags.idempotent
    description = str(tool.get("description") or tool.get("title") or "")
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 1] + "…"
    spec = ToolSpec(
        name=own if own.startswith(config.prefix) else config.prefix + own,  # git_ + git_log: git_log, once
        description=description,
        input_schema=input_schema,
        output_schema=tool.get("outputSchema") or {},
        idempotent=idempotent,
        requires_approval=approval,
        server=config.name,
        effect=annotated_effect(tool.get("annotations")),
        trusted_output=False,  # a server's outputs are data from outside; policy.servers may trust it
    )
    check_spec(spec, taken=False)
    return spec
