"""The sections of the settings schema that the kernel reads — run, convergence, prices — and the RunSettings they
make, as each adapter package keeps its own section in its settings.py."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field

from aeon.application.kernel.run import RunSettings
from aeon.application.plans.validation import MAX_PLAN_STEPS
from aeon.application.settings_section import Section as _Section
from aeon.domain.evaluation import ConvergenceCriteria, Severity
from aeon.domain.ledger import ModelPrice
from aeon.domain.tools import OutputCheck

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


def run_settings(
    run: RunSection,
    criteria: ConvergenceSettings,
    prices: Mapping[str, PriceSettings],
    *,
    llm_max_tokens: int | None,
    context_window: int | None,
    output_check: OutputCheck,
) -> RunSettings:
    """What the kernel needs of the validated sections, field by field (mypy checks each one); the model's and the
    tools' few settings it reads come from their sections."""
    return RunSettings(
        ttl=run.ttl,
        max_llm_calls=run.max_llm_calls,
        max_tokens=run.max_tokens,
        max_seconds=run.max_seconds,
        max_plan_steps=run.max_plan_steps,
        llm_max_tokens=llm_max_tokens,
        context_window=context_window,
        evaluate=run.evaluate,
        ttl_given=run.ttl_given,
        approval_timeout=run.approval_timeout,
        output_check=output_check,
        max_cost=run.max_cost,
        prices={model: ModelPrice(**price.model_dump()) for model, price in prices.items()},
        criteria=ConvergenceCriteria(
            min_completeness=criteria.min_completeness,
            min_coherence=criteria.min_coherence,
            max_severity=criteria.max_severity,
            require_consistency=criteria.require_consistency,
        ),
    )
