"""The run's shared prompt prefix: the preamble with the tool list, then the guides of the prompt kinds every pass
asks for. Every LLM call of a run opens with this one text (the gateway sends it as the first, system message); what
a call adds after it is its own kind's part: the guide of a kind asked only now and then, then its labelled slots.

Why this layout: a provider's prompt cache serves a prefix it has seen, so the second call of a run on is mostly
cached. llama.cpp's server sends a request to the idle slot whose cached prompt shares the longest prefix with it
(above `--slot-prompt-similarity`, 0.1) and reuses that prefix; OpenAI caches a repeated prefix of 1024 tokens or
more by itself; Anthropic caches up to a `cache_control` breakpoint, which the Anthropic adapter puts on the system
block. The guides of occasional kinds (reasoning steps, refinement, repairs, re-profiling) stay out of the prefix: a
run that never asks for them would pay for their tokens on its first call for nothing (measured on the local model:
see README "Costs, caps and traces").
"""

from __future__ import annotations

from aeon.application.llm.prompts import PromptTemplate, evaluation, templates

# The kinds every pass asks for, by run mode: with evaluation, phase A's one call and the evaluation; without, the
# plan alone. Their templates are `shared`: they render the per-call part only.
EVALUATING: tuple[PromptTemplate, ...] = (evaluation.EVALUATE, templates.PROFILE_AND_PLAN)
SINGLE_PASS: tuple[PromptTemplate, ...] = (templates.PLAN,)


def shared_prefix(tools: str, *, evaluate: bool) -> str:
    """The text every call of a run opens with: the preamble listing `tools`, then the guides of the kinds every
    pass of this run asks for (`evaluate`: the run's `run.evaluate`)."""
    kinds = EVALUATING if evaluate else SINGLE_PASS
    return "\n\n".join([templates.PREAMBLE.render({"tools": tools}), *(t.guide for t in kinds)])
