"""Hand-written plans (--plan): validated before they run; structural problems refuse the file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aeon.application.errors import InputError
from aeon.application.validation import build_plan, structural_problems
from aeon.domain.plan import Plan
from aeon.domain.tools import ToolSpec


def plan_from_document(doc: Any, tools: Mapping[str, ToolSpec], *, source: str) -> Plan:
    """A Plan from a parsed JSON/YAML document. Tool and argument problems are left to the executor's repair."""
    problems = structural_problems(doc)
    if problems:
        listed = "; ".join(str(p) for p in problems)
        raise InputError(f"plan {source} is invalid: {listed}")
    return build_plan(doc)
