"""Validating the merged config tree once, every problem worded as one line that names its key."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aeon.application.errors import ConfigurationError
from aeon.application.settings_section import did_you_mean
from aeon.entrypoints.config.schema import Settings


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
    what = "unknown key" + did_you_mean(Settings, loc) if err["type"] == "extra_forbidden" else err["msg"]
    if err["type"] == "value_error":
        what = str(err["ctx"]["error"])
    # a union adds the tried type to the path: the value's own path is the longest one that starts it
    note = next((env_notes[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in env_notes), None)
    return f"at {where}{_server_named(loc, data)}: {what}" + (f" ({note})" if note else "")


def _server_named(loc: tuple[Any, ...], data: Mapping[str, Any]) -> str:
    """` (MCP server 'name')` for a location inside one of tools.mcp, by its name when it has one; else ""."""
    if len(loc) < 3 or loc[:2] != ("tools", "mcp") or not isinstance(loc[2], int):
        return ""
    tools = data.get("tools")
    servers = tools.get("mcp") if isinstance(tools, Mapping) else None
    server = servers[loc[2]] if isinstance(servers, list) and 0 <= loc[2] < len(servers) else None
    name = server.get("name") if isinstance(server, Mapping) else None
    return f" (MCP server {name!r})" if isinstance(name, str) and name else ""
