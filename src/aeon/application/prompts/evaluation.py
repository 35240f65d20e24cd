"""Evaluation prompts: the one evaluation call of a pass (issues and convergence judgement together), and the
standalone semantic validation and convergence judgement it replaced in runs. Static part first, slots last."""

from __future__ import annotations

from aeon.application.prompts import PromptTemplate

# The example answers below are parroted by small models now and then; the validator drops issues that copy them.
VALIDATE_EXAMPLE_DESCRIPTIONS: tuple[str, ...] = (
    "the step says add but the expression multiplies",
    "a poem does not help to add two numbers",
)

VALIDATE = PromptTemplate(
    stop=("\nRequest:",),
    name="validate",
    text="""\
Review a plan for problems and answer with JSON only. Issue types:
- specificity: a step too vague to carry out
- relevance: a step that does not help the request
- do_say_mismatch: the description says one thing, the tool or its args do another
- hallucination: a tool or operation that does not exist, or an output no step could have produced
- consistency: steps depend on missing results, or the plan, the outputs and the final answer disagree
Severity is LOW, MEDIUM, HIGH or CRITICAL. Give the step_id of the step concerned and a short repair. Report at \
most 4 issues, and none when the plan is fine.

Request: repeat the word hi
Profile: reasoning_depth 1, information_sufficiency 1.0
Plan:
- a1: Echo the word hi | tool echo {"text": "hi"} | complete | output: hi
Final answer: hi
Issues: {"issues": []}

Request: add 2 and 3
Profile: reasoning_depth 1, information_sufficiency 1.0
Plan:
- a1: Add 2 and 3 | tool calculator {"expression": "2 * 3"} | complete | output: 6
- a2: Write a poem about numbers | agent llm | pending
Final answer: 6
Issues: {"issues": [{"type": "do_say_mismatch", "severity": "HIGH", "step_id": "a1", "description": "the step \
says add but the expression multiplies", "repair": "use the expression 2 + 3"}, {"type": "relevance", "severity": \
"LOW", "step_id": "a2", "description": "a poem does not help to add two numbers", "repair": "remove the step"}]}

Request: ${request}
Profile: ${profile}
Plan:
${plan}
Final answer: ${answer}
Issues:""",
)

CONVERGE = PromptTemplate(
    stop=("\nRequest:",),
    name="converge",
    text="""\
Judge whether a task is finished and answer with JSON only. completeness_score, from 0 to 1: how fully the final \
answer covers every part of the request. coherence_score, from 0 to 1: how free of contradictions and logical \
gaps the outputs are. consistent: true when the plan, the step outputs and the final answer agree. Take the \
validation issues into account. Give a one-sentence explanation and at most 4 short issues.

Request: multiply 4 by 5
Profile: reasoning_depth 1, information_sufficiency 1.0
Plan:
- a1: Multiply 4 by 5 | tool calculator {"expression": "4 * 5"} | complete | output: 20
Final answer: 20
Validation issues:
(none)
Assessment: {"completeness_score": 1.0, "coherence_score": 1.0, "consistent": true, "explanation": "The product \
20 answers the request.", "issues": []}

Request: add 2 and 3, then double the sum
Profile: reasoning_depth 1, information_sufficiency 1.0
Plan:
- a1: Add 2 and 3 | tool calculator {"expression": "2 + 3"} | complete | output: 5
- a2: State the result | agent llm | complete | output: 2 + 3 is 5.
Final answer: 2 + 3 is 5.
Validation issues:
(none)
Assessment: {"completeness_score": 0.5, "coherence_score": 0.9, "consistent": true, "explanation": "The sum is \
right but it was never doubled.", "issues": ["the sum was not doubled"]}

Request: ${request}
Profile: ${profile}
Plan:
${plan}
Final answer: ${answer}
Validation issues:
${issues}
Assessment:""",
)

# One call per pass instead of VALIDATE then CONVERGE: the judgement and the issues in one answer, and the facts
# found without the model (failed steps, unbacked claims, deterministic plan issues) given as validation issues.
# One example: measured on Gemma 3 270M (bench/local_model.py), a second, unfinished example was copied into the
# answers of finished tasks (completeness 0.5, "the sum was not doubled"); the base model copies what it is shown.
EVALUATE = PromptTemplate(
    stop=("\nRequest:",),
    name="evaluate",
    text="""\
Judge whether a task is finished and answer with JSON only. completeness_score, from 0 to 1: how fully the final \
answer covers every part of the request. coherence_score, from 0 to 1: how free of contradictions and logical \
gaps the outputs are. consistent: true when the plan, the step outputs and the final answer agree. Take the \
validation issues into account. Give a one-sentence explanation and at most 4 issues, each with a type \
(specificity, relevance, do_say_mismatch, hallucination or consistency), a severity (LOW, MEDIUM, HIGH or \
CRITICAL), the step_id concerned, a description and a short repair.

Request: multiply 4 by 5
Profile: reasoning_depth 1, information_sufficiency 1.0
Plan:
- a1: Multiply 4 by 5 | tool calculator {"expression": "4 * 5"} | complete | output: 20
Final answer: 20
Validation issues:
(none)
Assessment: {"completeness_score": 1.0, "coherence_score": 1.0, "consistent": true, "explanation": "The product \
20 answers the request.", "issues": []}

Request: ${request}
Profile: ${profile}
Plan:
${plan}
Final answer: ${answer}
Validation issues:
${issues}
Assessment:""",
)

ALL: tuple[PromptTemplate, ...] = (EVALUATE,)
STANDALONE: tuple[PromptTemplate, ...] = (VALIDATE, CONVERGE)  # SemanticValidator.validate, ConvergenceEngine.assess
