"""The prompt templates. Completion-style and few-shot, so that small base models can follow them too.

Each kind's guide (instructions and worked examples) is static; the kinds every pass asks for keep theirs in the run's
shared prefix (prompts/layout.py), the others send it just before their labelled slots, which always come last.
"""

from __future__ import annotations

import msgspec

from aeon.application.llm.prompts import PromptTemplate
from aeon.domain.llm import JSON_REPAIR_OPENINGS

PREAMBLE = PromptTemplate(
    name="preamble",
    text="""\
Aeon turns requests into JSON plans and runs them step by step with the tools below. Every answer is JSON in \
exactly the format its examples show. The kinds of question Aeon asks follow the tools, each with its examples; \
the question to answer comes last.

Tools:
${tools}""",
)

# Phase A in one call: the task profile and the plan asked together (the answer fills both contracts).
PROFILE_AND_PLAN = PromptTemplate(
    shared=True,
    stop=("\nRequest:",),
    name="profile_and_plan",
    # Measured on Gemma 3 270M (bench/local_model.py): the profile first (an outer object whose plan comes last, so
    # the answer ends where the plan ends; plan-first answers kept adding steps), raw_inference texts that name no
    # operation, and an addition as the last example (with only "multiply 6 by 7" last, "add 7 and 8" became "7 * 8").
    guide="""\
## Profile and plan
Rate how hard a request is, then turn it into a JSON plan. profile: reasoning_depth 1 (very shallow) to 5 (very \
deep); information_sufficiency 0.0 (details missing) to 1.0 (everything needed is given); expected_tool_usage none, \
minimal, moderate or extensive; output_breadth narrow, moderate or broad; confidence_requirement low, medium or \
high; raw_inference says why in a few words. plan: steps that run in order; a step either calls one of the tools \
above with "args" that match its input schema, or has "agent": "llm" when it needs reasoning and no tool. Use no \
other tools.

Request: plan a data migration for our system
Profile and plan: {"profile": {"reasoning_depth": 4, "information_sufficiency": 0.3, "expected_tool_usage": \
"moderate", "output_breadth": "broad", "confidence_requirement": "high", "raw_inference": "many unknowns, several \
steps"}, "plan": {"steps": \
[{"step_id": "s1", "description": "List what must be known about the system before migrating", "agent": "llm"}, \
{"step_id": "s2", "description": "Outline the migration from what s1 found", "agent": "llm"}]}}

Request: repeat the word hello
Profile and plan: {"profile": {"reasoning_depth": 1, "information_sufficiency": 1, "expected_tool_usage": \
"minimal", "output_breadth": "narrow", "confidence_requirement": "low", "raw_inference": "all given, one tool \
call"}, "plan": {"steps": [{"step_id": "s1", "description": \
"Echo the word hello", "tool": "echo", "args": {"text": "hello"}}]}}

Request: multiply 6 by 7
Profile and plan: {"profile": {"reasoning_depth": 1, "information_sufficiency": 1, "expected_tool_usage": \
"minimal", "output_breadth": "narrow", "confidence_requirement": "low", "raw_inference": "all given, one tool \
call"}, "plan": {"steps": [{"step_id": "s1", "description": \
"Multiply 6 by 7", "tool": "calculator", "args": {"expression": "6 * 7"}}]}}

Request: add 2 and 3 and explain the result
Profile and plan: {"profile": {"reasoning_depth": 2, "information_sufficiency": 1, "expected_tool_usage": \
"minimal", "output_breadth": "narrow", "confidence_requirement": "medium", "raw_inference": "all given, a tool \
call, then an explanation"}, "plan": {\
"steps": [{"step_id": "s1", "description": "Add 2 and 3", "tool": "calculator", "args": {"expression": "2 + 3"}}, \
{"step_id": "s2", "description": "Explain the sum from s1", "agent": "llm"}]}}""",
    text="""\
Request: ${request}
Profile and plan:""",
)

# The plan alone: for a run that asks no profile (run.evaluate: false, or a fixed TTL).
PLAN = PromptTemplate(
    shared=True,
    stop=("\nRequest:",),
    name="plan",
    guide="""\
## Plan
Turn a request into a JSON plan. Steps run in order. A step either calls one of the tools above with "args" that \
match its input schema, or has "agent": "llm" when it needs reasoning and no tool. Use no other tools.

Request: repeat the word hello
Plan: {"steps": [{"step_id": "s1", "description": "Echo the word hello", "tool": "echo", "args": {"text": \
"hello"}}]}

Request: multiply 6 by 7 and explain the result
Plan: {"steps": [{"step_id": "s1", "description": "Multiply 6 by 7", "tool": "calculator", "args": \
{"expression": "6 * 7"}}, {"step_id": "s2", "description": "Explain the product from s1", "agent": "llm"}]}""",
    text="""\
Request: ${request}
Plan:""",
)

# The profile alone: re-profiling at a pass boundary, with what the last pass revealed.
PROFILE = PromptTemplate(
    stop=("\nKnown so far:", "\nRequest:"),
    name="profile",
    guide="""\
## Profile again
Rate how hard a request is, given what is known so far. reasoning_depth: 1 very shallow to 5 very deep. \
information_sufficiency: 0.0 (details missing) to 1.0 (everything needed is given). expected_tool_usage: none, \
minimal, moderate or extensive. output_breadth: narrow, moderate or broad. confidence_requirement: low, medium or \
high.

Known so far: the echo step completed
Request: repeat the word hello
Profile: {"reasoning_depth": 1, "information_sufficiency": 1, "expected_tool_usage": "minimal", \
"output_breadth": "narrow", "confidence_requirement": "low", "raw_inference": "One echo, nothing to infer."}

Known so far: incomplete: the target database is unknown
Request: plan a data migration for our system
Profile: {"reasoning_depth": 4, "information_sufficiency": 0.3, "expected_tool_usage": "moderate", \
"output_breadth": "broad", "confidence_requirement": "high", "raw_inference": "Many unknowns about the system; \
needs several careful steps."}""",
    text="""\
Known so far: ${notes}
Request: ${request}
Profile:""",
)

REASON = PromptTemplate(
    stop=("\nGoal:",),
    # The finished example last: measured on Gemma 3 270M, the base model copies the last example's clarity_state.
    # Its answer restates s1's output ("The result is 5."): the model copies the form with the run's own number ("The
    # result is 15."), where a sentence made of the example's numbers ("2 plus 3 is 5.") came back word for word.
    name="reason",
    guide="""\
## Reason
Carry out one step of a plan by reasoning over the results of earlier steps. answer: a few plain sentences. \
clarity_state: CLEAR when the step could be done, PARTIALLY_CLEAR when something had to be assumed, BLOCKED when \
it cannot be done with what is known. handoff_to_next: what the next step needs from this one.

Goal: book the cheapest flight
Earlier results: (none yet)
Context: (none)
Step: Compare prices of the flights found
Result: {"answer": "No flights were found, so there is nothing to compare.", "clarity_state": "BLOCKED", \
"handoff_to_next": "no flight data"}

Goal: add 2 and 3 and explain
Earlier results: s1 = {"status": "complete", "output": 5}
Context: s1 computed 2 + 3
Step: Explain the sum from s1
Result: {"answer": "The result is 5.", "clarity_state": "CLEAR", "handoff_to_next": "the result is 5"}""",
    text="""\
Goal: ${goal}
Earlier results: ${memory}
Context: ${context}
Step: ${step}
Result:""",
)

REFINE = PromptTemplate(
    stop=("\nRequest:", "\nExample:"),
    name="refine",
    guide="""\
## Refine
Improve a plan after an evaluation. Steps that already ran cannot change. You may ADD a step, or MODIFY, REPLACE \
or REMOVE a step that has not run. Use only the tools listed, or "agent": "llm". Give a short justification.

Request: add 2 and 3 and say the result
Profile: depth 1/5, information 1.0, tools minimal, breadth narrow, confidence low (one sum)
Plan: s1 [complete] calculator {"expression": "2 + 3"} -> 5
Problems: incomplete: the result is never stated
Actions: {"actions": [{"action_type": "ADD", "target_step_id": "", "new_step": {"step_id": "s2", \
"description": "State that 2 + 3 is 5", "agent": "llm"}, "justification": "the answer must be stated"}]}""",
    text="""\
Request: ${request}
Profile: ${profile}
Plan: ${plan}
Problems: ${problems}
Actions:""",
)

REPAIR_STEP = PromptTemplate(
    stop=("\nGoal:", "\nExample:"),
    name="repair_step",
    guide="""\
## Repair a step
A plan step names a tool that does not exist or has arguments that do not fit. Rewrite the step so that it calls \
one of the tools above with arguments matching that tool's input schema. Keep the step's intent. Answer with the \
step as JSON only.

Goal: add 2 and 3
Step: {"step_id": "s1", "description": "Add 2 and 3", "tool": "adder", "args": {"a": 2, "b": 3}}
Problems: Tool 'adder' not found in registry
Fixed: {"step_id": "s1", "description": "Add 2 and 3", "tool": "calculator", "args": {"expression": "2 + 3"}}""",
    text="""\
Goal: ${goal}
Step: ${step}
Problems: ${problems}
Fixed:""",
)

REPAIR_JSON = PromptTemplate(
    stop=("\nBroken:", "\nSchema:"),
    name="repair_json",
    guide=JSON_REPAIR_OPENINGS[0]
    + """\
Fix a JSON document so that it is valid and satisfies the schema. Keep its meaning; do not add tools or steps that \
were not there. Answer with the corrected JSON only.

Schema: {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
Broken: {n: 1,}
Problems: output is not JSON and could not be repaired deterministically
Fixed: {"n": 1}""",
    text=JSON_REPAIR_OPENINGS[1]
    + """\
${schema}
Broken: ${broken}
Problems: ${problems}
Fixed:""",
)


def in_thread(template: PromptTemplate) -> PromptTemplate:
    """`template` for a run of a thread: its per-call part opens with the conversation so far (earlier requests and
    answers; an untrusted answer fenced as data). Its guide stays as it is: the run's shared prefix is unchanged."""
    return msgspec.structs.replace(template, text="Conversation so far:\n${conversation}\n" + template.text)


ALL: tuple[PromptTemplate, ...] = (
    PREAMBLE,
    PROFILE_AND_PLAN,
    PLAN,
    REPAIR_JSON,
    REPAIR_STEP,
    REASON,
    PROFILE,
    REFINE,
)
