"""Config layers: the built-in base.yaml, the --config file, a config mapping and CLI overrides, each layer's env
markers replaced in its parsed values (config/env_markers.py), merged in order and validated once."""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from aeon.adapters.documents import parse_yaml, read_text
from aeon.adapters.llm.settings import key_layer
from aeon.application.errors import ConfigurationError, InputError
from aeon.entrypoints.config.env_markers import EnvUses, credentials, forget_replaced, hidden, notes, substitute
from aeon.entrypoints.config.schema import Settings, free_prices
from aeon.entrypoints.config.validation import validate_settings

# Package data, so a non-editable install finds it: the first layer under every --config file.
BASE_CONFIG = resources.files("aeon.entrypoints").joinpath("base.yaml")
_PATH_KEYS = ("script", "model_path", "cache_dir", "slot_cache_dir")


def load_settings(
    config_file: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    mapping: Mapping[str, Any] | None = None,
) -> Settings:
    """Merge the built-in base.yaml, the chosen file, a config `mapping` (the Python API's `config={...}`: read as a
    file's parsed YAML would be, its paths relative to the working directory) and CLI overrides, each layer's env
    markers replaced in its parsed values (never in its text); validate once, naming the variable behind any value
    that does not fit."""
    if config_file is not None and not config_file.is_file():
        raise ConfigurationError(f"config file not found: {config_file}")
    data: dict[str, Any] = {}
    uses: EnvUses = {}
    for layer, layer_uses in _layers(config_file, mapping):
        if not layer:
            continue  # an empty file (or only comments) overrides nothing
        forget_replaced(uses, layer)
        uses.update(layer_uses)
        _merge(data, layer)
    if overrides:
        nested = _nest(overrides)
        forget_replaced(uses, nested)
        _merge(data, nested)
    named = [f", {config_file}" if config_file is not None else "", ", the config mapping" if mapping else ""]
    sources = "the built-in base.yaml" + "".join(named)
    config_dir = config_file.resolve().parent if config_file is not None else None
    return validate_settings(
        data,
        sources=sources,
        config_dir=config_dir,
        env_notes=notes(uses),
        hidden=hidden(uses),
        env_secrets=credentials(uses),
    )


def _layers(config_file: Path | None, mapping: Mapping[str, Any] | None) -> list[tuple[dict[str, Any], EnvUses]]:
    """The layers in order: the providers' (their API keys, their free models' prices), base.yaml, the file, the
    mapping; each with its env markers replaced."""
    base_name = "the built-in base.yaml"
    layers = [substitute(provider_layer(), os.environ, base_name)]
    with resources.as_file(BASE_CONFIG) as base:
        layers += [_layer(f, base_name if f == base else str(f)) for f in (base, config_file) if f]
    if mapping is not None:
        layers.append(substitute(_nest(mapping), os.environ, "the config mapping"))
    return layers


def provider_layer() -> dict[str, Any]:
    """What the provider registry puts under base.yaml: `keys.<provider>` from each provider's key variable, and a
    price of 0 for each model that costs nothing (the local one, the scripted one)."""
    free = {name: {"input": 0, "output": 0} for name in free_prices()}
    return {**key_layer(), "prices": free}


def _layer(f: Path, name: str) -> tuple[dict[str, Any], EnvUses]:
    """One config file as data: parsed, env markers replaced in its values, its own relative paths resolved."""
    literal = _literal_layer(f)
    data, uses = substitute(literal, os.environ, name)
    return _relative_to(data, literal, f), uses


_KINDS = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}


def _literal_layer(source: Path) -> dict[str, Any]:
    """The file as written (env markers not yet replaced): a mapping of sections, or {} for an empty file."""
    try:
        literal = parse_yaml(read_text(source, what="config file"), source=f"config file {source}")
    except InputError as exc:
        raise ConfigurationError(str(exc)) from None
    if literal is None:
        return {}
    if not isinstance(literal, dict):
        kind = _KINDS.get(type(literal), type(literal).__name__)
        raise ConfigurationError(f"config file {source} holds a {kind}; expected a mapping of sections (llm:, run:, …)")
    return literal


def _relative_to(data: dict[str, Any], literal_layer: dict[str, Any], source: Path) -> dict[str, Any]:
    """Paths a config file spells out (LLM script, model file, cache dir) are relative to that file.

    A path that arrives through an environment marker is the user's own, relative to the working directory.
    """
    llm = data.get("llm")
    literal = literal_layer.get("llm") or {}
    if isinstance(llm, dict) and isinstance(literal, dict):
        for key in _PATH_KEYS:
            value, spelled = llm.get(key), literal.get(key)
            from_env = isinstance(spelled, str) and "${" in spelled
            if isinstance(value, str) and value.strip() and not from_env and not Path(value).expanduser().is_absolute():
                llm[key] = str(source.parent / value)
    return data


def _merge(into: dict[str, Any], layer: Mapping[str, Any]) -> None:
    """A later layer over an earlier one: sections merge key by key; any other value (a list too) replaces."""
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = out
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def layered(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Layers of settings — sections, or dotted keys as overrides are — merged into one tree (a copy) as
    load_settings merges them: what a durable run records to rebuild its settings in another process."""
    data: dict[str, Any] = {}
    for layer in layers:
        _merge(data, _nest(layer))
    return data
