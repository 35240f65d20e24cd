"""Properties of the multi-pass loop (02 US1 scenario 6, SC-008; 05 SC-001): whatever the model answers, the run
ends structured within its budgets, its phases follow A B C D ( B C D)*, and only structure, never free text,
steers the phase sequence."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from aeon import testing
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.application.errors import LLMBadResponse, LLMRejected, LLMUnavailable
from aeon.application.kernel.run import RunSettings
from aeon.application.results import RunResult, RunStatus

from harness import SUM_STEP, document

Texts = Mapping[str, str]
Answer = str | dict[str, str]

# -- answers by call kind: valid ones and broken ones, free text taken from `t` ----------------------------------------


def _profile(depth: int) -> Callable[[Texts], Answer]:
    def make(t: Texts) -> Answer:
        return json.dumps(
            {
                "reasoning_depth": depth,
                "information_sufficiency": 0.5,
                "expected_tool_usage": "minimal",
                "output_breadth": "moderate",
                "confidence_requirement": "medium",
                "raw_inference": t["inference"],
            }
        )

    return make


def _plan(*steps: Callable[[Texts], dict[str, Any]]) -> Callable[[Texts], Answer]:
    return lambda t: json.dumps({"goal": "calculate the sum of 5 and 10", "steps": [s(t) for s in steps]})


def _sum(t: Texts) -> dict[str, Any]:
    return {**SUM_STEP, "description": t["step"]}


def _say(t: Texts) -> dict[str, Any]:
    return {"step_id": "s2", "description": t["step2"], "agent": "llm"}


def _evaluation(ok: bool, issues: list[dict[str, str]] | None = None) -> Callable[[Texts], Answer]:
    """The one evaluation answer of a pass: issues (none by default) and the convergence judgement."""

    def make(t: Texts) -> Answer:
        return json.dumps(
            {
                "issues": issues or [],
                "completeness_score": 1.0 if ok else 0.4,
                "coherence_score": 1.0 if ok else 0.9,
                "consistent": True,
                "explanation": t["explanation"],
            }
        )

    return make


def _refine(t: Texts) -> Answer:
    step = {"step_id": "s9", "description": t["step2"], "agent": "llm"}
    action = {"action_type": "ADD", "target_step_id": "", "new_step": step, "justification": t["explanation"]}
    return json.dumps({"actions": [action]})


def _fixed(answer: Answer) -> Callable[[Texts], Answer]:
    return lambda t: answer


def _both(profile: Callable[[Texts], Answer], plan: Callable[[Texts], Answer]) -> Callable[[Texts], Answer]:
    """Phase A's one answer on a first pass: a profile answer and a plan answer, joined."""
    return lambda t: json.dumps({"profile": json.loads(str(profile(t))), "plan": json.loads(str(plan(t)))})


HIGH_ISSUE = [{"type": "specificity", "severity": "HIGH", "step_id": "s1", "description": "too vague", "repair": "x"}]
UNAVAILABLE: Answer = {"error": "unavailable"}
REJECTED: Answer = {"error": "rejected"}
INVALID: Answer = {"error": "invalid"}
GARBAGE = "I am not sure what you mean."

VARIANTS: dict[str, list[Callable[[Texts], Answer]]] = {
    "profile_and_plan": [
        _both(_profile(1), _plan(_sum)),
        _both(_profile(3), _plan(_sum, _say)),
        _both(_profile(5), _plan(_say)),
        _both(_fixed(json.dumps({"reasoning_depth": 3})), _plan(_sum)),  # an incomplete profile half
        _both(_profile(3), _fixed(json.dumps({"goal": "g", "steps": []}))),  # a plan half with no steps
        _fixed(GARBAGE),
        _fixed(UNAVAILABLE),
        _fixed(REJECTED),
    ],
    "task_profile": [
        _profile(1),
        _profile(3),
        _profile(5),
        _fixed(json.dumps({"reasoning_depth": 3})),
        _fixed(GARBAGE),
        _fixed(UNAVAILABLE),
    ],
    "plan": [
        _plan(_sum),
        _plan(_sum, _say),
        _plan(_say),
        _fixed(json.dumps({"goal": "g", "steps": []})),
        _fixed(GARBAGE),
        _fixed(REJECTED),
    ],
    "evaluation": [  # variant 0 never converges, so the default path refines through every pass
        _evaluation(False),
        _evaluation(True),
        _evaluation(True, issues=HIGH_ISSUE),  # judged done, but a HIGH issue blocks convergence
        _fixed(json.dumps({"completeness_score": 2})),
        _fixed(json.dumps({"problems": []})),
        _fixed(GARBAGE),
        _fixed(INVALID),
        _fixed(UNAVAILABLE),
    ],
    "refinement": [_refine, _refine, _fixed(json.dumps({"actions": "none"})), _fixed(GARBAGE), _fixed(UNAVAILABLE)],
    "step": [_fixed(json.dumps(SUM_STEP)), _fixed(GARBAGE)],
    "reason": [lambda t: t["reason"], lambda t: t["reason"], _fixed(UNAVAILABLE)],
}


_ERRORS = {
    "unavailable": lambda: LLMUnavailable("provider unavailable after 3 attempts (HTTP 503)", status=503, attempts=3),
    "rejected": lambda: LLMRejected("rejected: HTTP 400 picked rejection", status=400),
    "invalid": lambda: LLMBadResponse("undecodable response body (picked)"),
}


def kind_of(call: testing.LLMCall) -> str:
    return call.schema_name if call.schema_name in VARIANTS else "reason"


def picking_llm(picks: Sequence[int], texts: Texts) -> testing.FunctionLLM:
    """Answers each call by its kind (the schema name), choosing the variant the next drawn index names."""
    taken: list[str] = []

    def answer(call: testing.LLMCall) -> str | Exception:
        kind, n = kind_of(call), len(taken)
        taken.append(kind)
        pick = picks[n] if n < len(picks) else 0
        variants = VARIANTS[kind]
        chosen = variants[pick % len(variants)](texts)
        return chosen if isinstance(chosen, str) else _ERRORS[chosen["error"]]()

    return testing.FunctionLLM(answer, name="picking")


@dataclass
class Outcome:
    result: RunResult
    requests: list[str]
    records: list[dict[str, Any]]

    def phases(self) -> str:
        return "".join(r["phase"] for r in self.records if r["event"] == "phase_entry")


def drive(picks: Sequence[int], texts: Texts, *, ttl: int, max_llm_calls: int) -> Outcome:
    llm = picking_llm(picks, texts)
    with TemporaryDirectory() as d:
        path = Path(d) / "run.jsonl"
        log = JsonlEventLog(path)
        settings = RunSettings(evaluate=True, ttl=ttl, max_llm_calls=max_llm_calls)
        orch = testing.orchestrator(llm, run=settings, log=log)
        try:
            result = asyncio.run(orch.run("calculate the sum of 5 and 10"))
        finally:
            log.close()
        records = [json.loads(line) for line in path.read_text().splitlines()]
    return Outcome(result=result, requests=[kind_of(c) for c in llm.calls], records=records)


TEXTS: Texts = {
    "inference": "a small sum",
    "step": "Add 5 and 10",
    "step2": "State the sum from s1",
    "explanation": "the answer is stated",
    "reason": "The sum is fifteen.",
}
_WORDS = st.sampled_from(["alpha", "bravo", "sum", "total", "green", "number", "plan", "five", "ten", "stated"])
_FREE = st.lists(_WORDS, min_size=1, max_size=6).map(" ".join)
_TEXTS = st.fixed_dictionaries({k: _FREE for k in TEXTS})
_PICKS = st.lists(st.one_of(st.just(0), st.integers(0, 11)), max_size=40)  # mostly the lawful answer
# A first; then each cycle B C D, re-entering A (re-profiling) before B only after a D; a cut run is a prefix
LAWFUL = re.compile(r"(?:ABCD(?:A?BCD)*(?:A(?:BC?)?|BC?)?|(?:A(?:BC?)?)?)")


def assert_well_formed(o: Outcome, *, ttl: int, max_llm_calls: int) -> None:
    res = o.result
    assert isinstance(res, RunResult)
    assert res.status in (RunStatus.COMPLETED, RunStatus.TTL_EXPIRED, RunStatus.ERROR)
    assert (res.status is RunStatus.ERROR) == (res.error is not None)
    assert (res.status is RunStatus.TTL_EXPIRED) == (res.ttl_expiration is not None)
    if res.status is RunStatus.COMPLETED:
        assert res.converged is True  # with evaluation on, only convergence halts the loop
    assert res.passes <= ttl
    assert len(o.requests) <= max_llm_calls and document(res)["budget"]["llm_calls"] == len(o.requests)
    phases = o.phases()
    assert LAWFUL.fullmatch(phases), phases
    bounds = [
        (r["event"], r["phase"], r["pass_number"]) for r in o.records if r["event"] in ("phase_entry", "phase_exit")
    ]
    assert bounds[0::2] == [("phase_entry", p, n) for _, p, n in bounds[0::2]]
    assert [("phase_exit", p, n) for _, p, n in bounds[0::2]] == bounds[1::2]
    assert [r["event"] for r in o.records].count("run_end") == 1
    assert o.records[0]["event"] == "run_start" and o.records[-1]["event"] == "run_end"
    assert {r["correlation_id"] for r in o.records} == {res.correlation_id}


@settings(max_examples=80)
@given(picks=_PICKS, ttl=st.integers(0, 3), cap=st.integers(0, 40))
def test_any_model_behaviour_ends_in_a_structured_result_with_a_lawful_phase_sequence(picks, ttl, cap):
    o = drive(picks, TEXTS, ttl=ttl, max_llm_calls=cap)
    assert_well_formed(o, ttl=ttl, max_llm_calls=cap)


@settings(max_examples=60)
@given(picks=_PICKS, a=_TEXTS, b=_TEXTS, ttl=st.integers(1, 3))
def test_answers_differing_only_in_free_text_give_the_same_phases_and_passes(picks, a, b, ttl):
    one = drive(picks, a, ttl=ttl, max_llm_calls=40)
    two = drive(picks, b, ttl=ttl, max_llm_calls=40)
    assert one.phases() == two.phases()
    assert one.result.passes == two.result.passes
    assert one.result.status == two.result.status
    assert one.requests == two.requests


def test_the_picking_model_reaches_deep_runs():
    """The strategy is not vacuous: the default picks refine through every pass; one pick converges in pass 2."""
    o = drive([], TEXTS, ttl=3, max_llm_calls=40)
    assert o.phases() == "ABCDBCDBCD" and o.result.status is RunStatus.TTL_EXPIRED and o.result.passes == 3
    first = ["profile_and_plan", "evaluation", "refinement"]
    assert o.requests[:5] == [*first, "reason", "evaluation"]
    o = drive([0, 0, 0, 0, 1], TEXTS, ttl=3, max_llm_calls=40)
    assert o.phases() == "ABCDBCD" and o.result.status is RunStatus.COMPLETED and o.result.converged is True
