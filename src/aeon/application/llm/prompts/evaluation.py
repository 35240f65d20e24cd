"""The evaluation prompt: one call per pass, the validation issues and the convergence judgement together. Asked in
every pass, its guide is part of the run's shared prefix; a call sends only its labelled slots."""

from __future__ import annotations

from aeon.application.llm.prompts import PromptTemplate

# One call per pass, not a validation call then a convergence call: the judgement and the issues in one answer, and
# the facts found without the model (failed steps, unbacked claims, deterministic plan issues) given as known issues.
# One example: measured on Gemma 3 270M (bench/local_model.py), a second, unfinished example was copied into the
# answers of finished tasks (completeness 0.5, "the sum was not doubled"); the base model copies what it is shown.
# Whole scores are written 1, not 1.0: the model copies that too, two generated tokens fewer a score.
EVALUATE = PromptTemplate(
    shared=True,
    stop=("\nRequest:",),
    name="evaluate",
    guide="""\
## Evaluate
Judge whether a task is finished and answer with JSON only. completeness_score, from 0 to 1: how fully the final \
answer covers every part of the request. coherence_score, from 0 to 1: how free of contradictions and logical \
gaps the outputs are. consistent: true when the plan, the step outputs and the final answer agree. Take the \
validation issues into account. Give an explanation of a few words and at most 4 issues, each with a type \
(specificity, relevance, do_say_mismatch, hallucination or consistency), a severity (LOW, MEDIUM, HIGH or \
CRITICAL), the step_id concerned, a description and a short repair.

Request: multiply 4 by 5
Profile: reasoning_depth 1, information_sufficiency 1.0
Plan:
- a1: Multiply 4 by 5 | tool calculator {"expression": "4 * 5"} | complete | output: 20
Final answer: 20
Validation issues:
(none)
Assessment: {"completeness_score": 1, "coherence_score": 1, "consistent": true, "explanation": "answered in \
full", "issues": []}""",
    text="""\
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
