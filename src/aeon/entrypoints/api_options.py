"""What the Python API's options mean: the config as a file or a mapping, the caps as overrides, the plan given."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from aeon.adapters.documents import read_document
from aeon.adapters.llm.settings import model_overrides
from aeon.application.errors import ConfigurationError, UsageError
from aeon.application.plans.plan_documents import plan_from_document
from aeon.application.ports import ToolPort
from aeon.domain.plan import Plan

PathLike = str | os.PathLike[str]


RUN_LIMITS = ("ttl", "max_llm_calls", "max_tokens", "max_cost", "max_seconds")


def config_of(config: PathLike | Mapping[str, Any] | None) -> tuple[Path | None, Mapping[str, Any] | None]:
    if config is None:
        return None, None
    if isinstance(config, Mapping):
        if not all(isinstance(key, str) for key in config):
            raise ConfigurationError("the config mapping's keys must be section names (llm, run, tools …)")
        return None, config
    if isinstance(config, str | os.PathLike):
        return Path(config), None
    raise UsageError(f"config must be a path to a YAML file or a mapping, not {type(config).__name__}")


def overrides_of(options: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments as dotted settings, applied over the config as `aeon run`'s flags are."""
    given: Mapping[str, Any] = options
    out: dict[str, Any] = {f"run.{name}": given[name] for name in RUN_LIMITS if given.get(name) is not None}
    if "run.ttl" in out:
        out["run.ttl_given"] = True
    if isinstance(model := options.get("model"), str):
        out |= model_overrides(model)
    if (log_file := options.get("log_file")) is not None:
        out["log.path"] = "" if log_file is False else os.fspath(log_file)
    return out


def plan_of(plan: Plan | Mapping[str, Any] | PathLike | None, tools: ToolPort) -> Plan | None:
    """The given plan, checked as `aeon run --plan` checks a file; a Plan is copied (the run changes its own)."""
    if plan is None:
        return None
    known = {spec.name: spec for spec in tools.list()}
    if isinstance(plan, Plan):
        return plan_from_document(msgspec.to_builtins(plan), source="(a Plan)", tools=known)
    if isinstance(plan, Mapping):
        return plan_from_document(dict(plan), source="(a mapping)", tools=known)
    if isinstance(plan, str | os.PathLike):
        return plan_from_document(read_document(Path(plan), what="plan"), source=os.fspath(plan), tools=known)
    raise UsageError(f"plan must be a Plan, a mapping or a path to a plan file, not {type(plan).__name__}")
