"""The prompt templates of the chat profile: for instruction-tuned models with native structured outputs.

No worked examples and no schema in prose: the answer's JSON schema goes once, in the structured-output request
(OpenAI `response_format`, Anthropic `output_config` or a forced tool), so a prompt says only what the schema cannot
(what a field means, what to judge). The slots are the base templates' (templates.py, evaluation.py), so every caller
fills either set alike; no stop sequences, as there is no next example to stop at.
"""

from __future__ import annotations

from aeon.application.llm.prompts import PromptTemplate
from aeon.domain.llm import JSON_REPAIR_OPENINGS

PREAMBLE = PromptTemplate(
    name="preamble",
    text="""\
Aeon plans requests as JSON, runs the plans with these tools and judges the results. Answer in JSON, per the schema.
Tools:
${tools}""",
)

_PLAN_RULE = 'Steps run in order; each calls one listed tool with its args, or has agent "llm" to reason.'

PROFILE_AND_PLAN = PromptTemplate(
    shared=True,
    name="profile_and_plan",
    guide=f"""\
## Profile and plan
Rate the request's difficulty, then plan it. {_PLAN_RULE}""",
    text="""\
## Profile and plan
Request: ${request}""",
)

PLAN = PromptTemplate(
    shared=True,
    name="plan",
    guide=f"""\
## Plan
Plan the request. {_PLAN_RULE}""",
    text="""\
## Plan
Request: ${request}""",
)

EVALUATE = PromptTemplate(
    shared=True,
    name="evaluate",
    guide="""\
## Evaluate
Judge a run: scores 0-1 for how fully the answer covers the request and how coherent the outputs are; consistent if \
plan, outputs and answer agree; only real issues.""",
    text="""\
## Evaluate
Request: ${request}
Profile: ${profile}
Plan:
${plan}
Answer: ${answer}
Known issues: ${issues}""",
)

PROFILE = PromptTemplate(
    name="profile",
    guide="""\
## Profile again
Rate the request's difficulty, given what is known so far.""",
    text="""\
Known so far: ${notes}
Request: ${request}""",
)

REASON = PromptTemplate(
    name="reason",
    guide="""\
## Reason
Do one plan step by reasoning over earlier results. clarity_state: CLEAR, PARTIALLY_CLEAR (had to assume) or BLOCKED \
(cannot be done); handoff_to_next: what the next step needs.""",
    text="""\
Goal: ${goal}
Earlier results: ${memory}
Context: ${context}
Step: ${step}""",
)

REFINE = PromptTemplate(
    name="refine",
    guide="""\
## Refine
Improve the plan after its evaluation. Steps that ran cannot change: ADD a step, or MODIFY, REPLACE or REMOVE one \
not run yet, with listed tools or agent "llm"; justify each.""",
    text="""\
Request: ${request}
Profile: ${profile}
Plan: ${plan}
Problems: ${problems}""",
)

REPAIR_STEP = PromptTemplate(
    name="repair_step",
    guide="""\
## Repair a step
The step names no listed tool or its args do not fit. Rewrite it to call a listed tool with fitting args; keep its \
intent and step_id.""",
    text="""\
Goal: ${goal}
Step: ${step}
Problems: ${problems}""",
)

# The schema is in the request: the broken answer and its problems are all the model needs besides.
REPAIR_JSON = PromptTemplate(
    name="repair_json",
    guide=JSON_REPAIR_OPENINGS[0] + "Fix this answer so that it fits the schema; keep its meaning, add nothing.",
    text="""\
Broken: ${broken}
Problems: ${problems}""",
)

ALL: tuple[PromptTemplate, ...] = (
    PREAMBLE,
    PROFILE_AND_PLAN,
    PLAN,
    EVALUATE,
    REPAIR_JSON,
    REPAIR_STEP,
    REASON,
    PROFILE,
    REFINE,
)
