"""The prompt templates. Completion-style and few-shot, so that small base models can follow them too."""

from __future__ import annotations

from aeon.application.llm.prompts import PromptTemplate

PREAMBLE = PromptTemplate(
    name="preamble",
    text="""\
Aeon turns requests into JSON plans and runs them step by step with the tools below. Every answer is JSON in \
exactly the format its examples show.

Tools:
${tools}""",
)

PLAN = PromptTemplate(
    stop=("\nRequest:",),
    name="plan",
    text="""\
Turn a request into a JSON plan. Steps run in order. A step either calls one of the tools below with "args" that \
match its input schema, or has "agent": "llm" when it needs reasoning and no tool. Use no other tools.

Request: repeat the word hello
Plan: {"goal": "repeat the word hello", "steps": [{"step_id": "s1", "description": "Echo the word hello", \
"tool": "echo", "args": {"text": "hello"}}]}

Request: multiply 6 by 7 and explain the result
Plan: {"goal": "multiply 6 by 7 and explain the result", "steps": [{"step_id": "s1", "description": "Multiply 6 \
by 7", "tool": "calculator", "args": {"expression": "6 * 7"}}, {"step_id": "s2", "description": "Explain the \
product from s1", "agent": "llm"}]}

Request: ${request}
Plan:""",
)

REPAIR_JSON = PromptTemplate(
    stop=("\nBroken:", "\nSchema:"),
    name="repair_json",
    text="""\
Fix a JSON document so that it is valid and satisfies the schema. Keep its meaning; do not add tools or steps that \
were not there. Answer with the corrected JSON only.

Schema: ${schema}

Broken: ${broken}
Problems: ${problems}
Fixed:""",
)

REPAIR_STEP = PromptTemplate(
    stop=("\nGoal:", "\nExample:"),
    name="repair_step",
    text="""\
A plan step names a tool that does not exist or has arguments that do not fit. Rewrite the step so that it calls \
one of the tools below with arguments matching that tool's input schema. Keep the step's intent. Answer with the \
step as JSON only.

Example:
Goal: add 2 and 3
Step: {"step_id": "s1", "description": "Add 2 and 3", "tool": "adder", "args": {"a": 2, "b": 3}}
Problems: Tool 'adder' not found in registry
Fixed: {"step_id": "s1", "description": "Add 2 and 3", "tool": "calculator", "args": {"expression": "2 + 3"}}

Goal: ${goal}
Step: ${step}
Problems: ${problems}
Fixed:""",
)

REASON = PromptTemplate(
    stop=("\nGoal:",),
    name="reason",
    text="""\
Carry out one step of a plan by reasoning over the results of earlier steps. answer: a few plain sentences. \
clarity_state: CLEAR when the step could be done, PARTIALLY_CLEAR when something had to be assumed, BLOCKED when \
it cannot be done with what is known. handoff_to_next: what the next step needs from this one.

Goal: add 2 and 3 and explain
Earlier results: s1 = {"status": "complete", "output": 5}
Context: s1 computed 2 + 3
Step: Explain the sum from s1
Result: {"answer": "2 plus 3 is 5.", "clarity_state": "CLEAR", "handoff_to_next": "the sum is 5"}

Goal: book the cheapest flight
Earlier results: (none yet)
Context: (none)
Step: Compare prices of the flights found
Result: {"answer": "No flights were found, so there is nothing to compare.", "clarity_state": "BLOCKED", \
"handoff_to_next": "no flight data"}

Goal: ${goal}
Earlier results: ${memory}
Context: ${context}
Step: ${step}
Result:""",
)

PROFILE = PromptTemplate(
    stop=("\nKnown so far:", "\nRequest:"),
    name="profile",
    text="""\
Rate how hard a request is. reasoning_depth: 1 very shallow to 5 very deep. information_sufficiency: 0.0 (details \
missing) to 1.0 (everything needed is given). expected_tool_usage: none, minimal, moderate or extensive. \
output_breadth: narrow, moderate or broad. confidence_requirement: low, medium or high.

Known so far: nothing yet
Request: repeat the word hello
Profile: {"reasoning_depth": 1, "information_sufficiency": 1.0, "expected_tool_usage": "minimal", \
"output_breadth": "narrow", "confidence_requirement": "low", "raw_inference": "One echo, nothing to infer."}

Known so far: nothing yet
Request: plan a data migration for our system
Profile: {"reasoning_depth": 4, "information_sufficiency": 0.3, "expected_tool_usage": "moderate", \
"output_breadth": "broad", "confidence_requirement": "high", "raw_inference": "Many unknowns about the system; \
needs several careful steps."}

Known so far: ${notes}
Request: ${request}
Profile:""",
)

REFINE = PromptTemplate(
    stop=("\nRequest:", "\nExample:"),
    name="refine",
    text="""\
Improve a plan after an evaluation. Steps that already ran cannot change. You may ADD a step, or MODIFY, REPLACE \
or REMOVE a step that has not run. Use only the tools listed, or "agent": "llm". Give a short justification.

Example:
Request: add 2 and 3 and say the result
Plan: s1 [complete] calculator {"expression": "2 + 3"} -> 5
Problems: incomplete: the result is never stated
Actions: {"actions": [{"action_type": "ADD", "target_step_id": "", "new_step": {"step_id": "s2", \
"description": "State that 2 + 3 is 5", "agent": "llm"}, "justification": "the answer must be stated"}]}

Request: ${request}
Profile: ${profile}
Plan: ${plan}
Problems: ${problems}
Actions:""",
)
ALL: tuple[PromptTemplate, ...] = (PREAMBLE, PLAN, REPAIR_JSON, REPAIR_STEP, REASON, PROFILE, REFINE)
