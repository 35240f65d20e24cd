"""The sections of the settings schema that the kernel reads (RunSettings): run, convergence, prices."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
)

from aeon.application.kernel.run import RunSettings
from aeon.application.plans.validation import MAX_PLAN_STEPS
from aeon.application.settings_section import Section as _Section
from aeon.domain.evaluation import Severity
from aeon.domain.provenance import Effect

_RUN = RunSettings()  # the kernel's defaults: the one place they are written


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


class ToolPolicySettings(_Section):
    """`policy.tools.NAME`: the tool's effect and output trust over what it declared; per argument, `any` lets an
    untrusted value into a consequential call (the default, `trusted`, asks for approval first)."""

    effect: Effect | None = None
    trusted_output: bool | None = None
    args: dict[str, Literal["trusted", "any"]] = Field(default_factory=dict)


class ServerPolicySettings(_Section):
    trusted: bool = False


class PolicySettings(_Section):
    """The `policy:` section: the capability policy checked before every tool call (application/policy.py)."""

    enabled: bool = True
    untrusted_may_call: list[Effect] = Field(default_factory=lambda: [Effect.NONE, Effect.READ])
    tools: dict[str, ToolPolicySettings] = Field(default_factory=dict)
    servers: dict[str, ServerPolicySettings] = Field(default_factory=dict)
