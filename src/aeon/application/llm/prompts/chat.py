"""The prompt templates of the chat profile: for instruction-tuned models with native structured outputs.

No worked examples and no schema in prose: the answer's JSON schema goes once, in the structured-output request
(OpenAI `response_format`, Anthropic `output_config` or a forced tool), so a prompt says only what the schema cannot
(what a field means, what to judge). The slots are the base templates' (templates.py, evaluation.py), so every caller
fills either set alike (a slot a chat prompt does not show is left out); no stop sequences, as there is no next
example to stop at. The shared prefix is the preamble and the tool list; each kind's guide, a sentence or two, goes
with its own call: a chat model's prefix is short, and a guide in it would be sent to every call that does not need it.
"""

from __future__ import annotations

from aeon.application.llm.prompts import PromptTemplate
from aeon.domain.llm import JSON_REPAIR_OPENINGS

PREAMBLE = PromptTemplate(
    name="preamble",
    text="""\
Aeon plans requests and runs them with these tools. Answer in JSON per the schema.
Tools:
${tools}""",
)

_PLAN_RULE = 'steps run in order; each calls a listed tool with its args, or has agent "llm" to reason.'

PROFILE_AND_PLAN = PromptTemplate(
    name="profile_and_plan",
    guide=f"Rate the request, then plan it: {_PLAN_RULE}",
    text="Request: ${request}",
)

PLAN = PromptTemplate(name="plan", guide=f"Plan the request: {_PLAN_RULE}", text="Request: ${request}")

EVALUATE = PromptTemplate(
    name="evaluate",
    guide="Judge the run: how complete and coherent the answer is (0-1), whether plan, outputs and answer agree; "
    "real issues only.",
    text="""\
Request: ${request}
Plan:
${plan}
Answer: ${answer}
Known issues: ${issues}""",
)

PROFILE = PromptTemplate(
    name="profile",
    guide="""\
Rate the request's difficulty, given what is known so far.""",
    text="""\
Known so far: ${notes}
Request: ${request}""",
)

REASON = PromptTemplate(
    name="reason",
    guide="""\
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
