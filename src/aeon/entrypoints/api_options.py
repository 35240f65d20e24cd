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
from aeon.application.ports import ToolPort
from aeon.application.runs import plan_given, run_overrides
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
    log_file = options.get("log_file")
    log = None if log_file is None else "" if log_file is False else os.fspath(log_file)
    out = run_overrides(**{name: options.get(name) for name in RUN_LIMITS}, log_file=log)
    if isinstance(model := options.get("model"), str):
        out |= model_overrides(model)
    return out


def plan_of(plan: Plan | Mapping[str, Any] | PathLike | None, tools: ToolPort) -> Plan | None:
    """The given plan, checked as `aeon run --plan` checks a file; a Plan is copied (the run changes its own)."""
    if plan is None:
        return None
    if isinstance(plan, Plan):
        return plan_given(msgspec.to_builtins(plan), "(a Plan)", tools)
    if isinstance(plan, Mapping):
        return plan_given(dict(plan), "(a mapping)", tools)
    if isinstance(plan, str | os.PathLike):
        return plan_given(read_document(Path(plan), what="plan"), os.fspath(plan), tools)
    raise UsageError(f"plan must be a Plan, a mapping or a path to a plan file, not {type(plan).__name__}")
