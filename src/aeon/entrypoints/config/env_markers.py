"""`${VAR:default}` markers, replaced inside the string values of a parsed config file, never in its YAML text."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from aeon.application.errors import ConfigurationError

# dependency-injector's marker syntax, kept so every existing config means what it meant: the name, then an optional
# default after the first colon. What a variable holds is inserted as text and never parsed again: a quote or a
# newline in it cannot become YAML structure, and a `${…}` in it is not expanded.
MARKER = re.compile(r"\$\{(?P<name>[^}^{:]+)(?P<colon>:?)(?P<default>[^}\n]*)\}")
# A variable whose name holds one of these words is a credential: its value is never shown in an error.
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "AUTH", "PRIVATE", "DSN")
_SECRET_NAMES = ("DATABASE_URL",)  # a database URL carries its password

Where = tuple[str | int, ...]
# For each value that a set environment variable went into: (name, value) of each such variable.
EnvUses = dict[Where, tuple[tuple[str, str], ...]]


def secret_named(name: str) -> bool:
    """Whether a config error may not quote the value of the variable `name` used in the config. Broader on purpose
    than `domain/secret_values.secret_env_name` (which values are blanked in every sink): hiding a harmless value
    from an error costs nothing, blanking it everywhere would garble text."""
    upper = name.upper()
    return any(word in upper for word in _SECRET_WORDS) or any(upper.endswith(n) for n in _SECRET_NAMES)


def substitute(tree: Any, environ: Mapping[str, str], source: str) -> tuple[Any, EnvUses]:
    """The parsed `tree` with the markers in its string values replaced; and which set variables went where.

    A value that is one marker and comes out empty is null, as an empty YAML value is: an optional number left
    unset by its variable is unset, not "". Anything else stays text; the settings schema converts it to the
    declared type (number, boolean, path) and names the variable when it cannot. Keys are not substituted, and a key
    holding a control character is an error: it cannot be shown on one line, nor match a setting.
    """
    uses: EnvUses = {}

    def walk(node: Any, where: Where) -> Any:
        if isinstance(node, dict):
            for key in node:
                if isinstance(key, str) and any(unicodedata.category(c) in ("Cc", "Cf") for c in key):
                    where_ = _dotted(where)
                    raise ConfigurationError(f"config file {source}: key {key!r} at {where_} holds a control character")
            return {key: walk(value, (*where, key)) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value, (*where, i)) for i, value in enumerate(node)]
        if isinstance(node, str) and "${" in node:
            return _replace(node, where)
        return node

    def _replace(text: str, where: Where) -> str | None:
        used: list[tuple[str, str]] = []

        def value_of(match: re.Match[str]) -> str:
            name = match["name"]
            if name in environ:
                used.append((name, environ[name]))
                return environ[name]
            if not match["colon"]:
                raise ConfigurationError(
                    f"config file {source}: environment variable {name} is not set (at {_dotted(where)}); "
                    f"set it, or give the marker a default: ${{{name}:…}}"
                )
            return match["default"]

        replaced = MARKER.sub(value_of, text)
        if used:
            uses[where] = tuple(used)
        return None if replaced == "" and MARKER.fullmatch(text) else replaced

    return walk(tree, ()), uses


def forget_replaced(uses: EnvUses, layer: Mapping[str, Any]) -> None:
    """A later layer (file or CLI flag) replaces an earlier value: the variable behind that one explains nothing."""
    leaves = set(_leaf_paths(layer))
    for where in list(uses):
        if any(where[:n] in leaves for n in range(1, len(where) + 1)) or any(p[: len(where)] == where for p in leaves):
            del uses[where]


def _leaf_paths(node: Mapping[str, Any], where: Where = ()) -> Iterator[Where]:
    for key, value in node.items():
        if isinstance(value, Mapping):
            yield from _leaf_paths(value, (*where, key))
        else:
            yield (*where, key)


def notes(uses: EnvUses) -> dict[Where, str]:
    """For each value from the environment, what an error about it adds: the variables, and their values unless
    a name is secret-like (clipped, and escaped so that the error stays one line)."""
    out = {}
    for where, used in uses.items():
        shown = [name if secret_named(name) else f"{name}={_clip(value)!r}" for name, value in used]
        hidden = " (value not shown)" if any(secret_named(name) for name, _ in used) else ""
        out[where] = f"from the environment: {', '.join(shown)}{hidden}"
    return out


def hidden(uses: EnvUses) -> list[str]:
    """The values of secret-named variables, which no error may quote."""
    return sorted({value for used in uses.values() for name, value in used if secret_named(name) and value})


def credentials(uses: EnvUses) -> list[str]:
    """The values of the variables that went into an MCP server's `env` or `headers` (tools.mcp.N.env.NAME …), or an
    A2A agent's `headers`: whatever the variables are called, what a server is handed that way is a credential."""
    return sorted(
        {value for where, used in uses.items() if _in_mcp_credentials(where) for _, value in used if value.strip()}
    )


def _in_mcp_credentials(where: Where) -> bool:
    if len(where) == 5 and where[:2] == ("tools", "a2a"):
        return where[3] == "headers"
    return len(where) == 5 and where[:2] == ("tools", "mcp") and where[3] in ("env", "headers")


def _clip(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _dotted(where: Where) -> str:
    return ".".join(str(p) for p in where) or "(top level)"
