"""Human rendering: live progress on stderr and the final result on stdout."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from aeon.application.result import RunResult, RunStatus
from aeon.domain.tools import ToolSpec

_MARK = {"complete": "✓", "failed": "✗", "invalid": "⊘", "pending": "·", "running": "▶"}


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ConsoleProgress:
    """ProgressPort that prints one line per event, so a long LLM call never looks like a hang."""

    def __init__(self, stream: TextIO, *, verbose: bool = True) -> None:
        self._out = stream
        self._verbose = verbose

    def _line(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def update(self, event: str, data: Mapping[str, Any]) -> None:
        d = data
        if event == "phase":
            self._line(f"── pass {d.get('pass')} · {d.get('phase')}")
        elif event == "plan":
            plan = d["plan"]
            self._line(f"plan: {plan['goal']} ({counted(len(plan['steps']), 'step')})")
            for s in plan["steps"]:
                how = f"tool {s['tool']} {json.dumps(s.get('args') or {})}" if s.get("tool") else "agent llm"
                self._line(f"  {s['step_index']}. [{s['step_id']}] {s['description']} — {how}")
        elif event == "step_start":
            self._line(f"▶ [{d['index']}/{d['total']}] {d['step_id']}: {d['description']}")
        elif event == "step_end":
            mark = _MARK.get(str(d["status"]), "?")
            detail = _short(d["output"]) if d["status"] == "complete" else "; ".join(d.get("errors") or [])
            self._line(f"{mark} {d['step_id']} {d['status']} ({d.get('mode') or '-'}): {detail}")
        elif event == "warning":
            self._line(f"⚠ {d['message']}")
        elif event == "step_repaired":
            self._line(f"↻ {d['step_id']} repaired: now calls {d['tool']} {json.dumps(d.get('args') or {})}")
        elif event == "step_fallback":
            self._line(f"⤷ {d['step_id']} could not be repaired: falling back to LLM reasoning")
        elif event == "supervisor" and self._verbose:
            ok = "ok" if d.get("succeeded") else "failed"
            self._line(f"  supervisor {d['kind']} on {d['target']} ({ok}): {_short(d.get('detail', ''), 120)}")
        elif event == "llm_start" and self._verbose:
            where = f" · step {d['step']}" if d.get("step") else ""
            self._line(f"  … LLM {d['purpose']} ({d.get('phase')}{where})")
        elif event == "llm_end" and self._verbose:
            rate = d.get("tokens_per_s")
            speed = f" at {rate:.1f} tok/s" if isinstance(rate, float) else ""
            self._line(f"  … {d['completion_tokens']} tokens{speed}")
        elif event == "assessment":
            sc = d.get("scores") or {}
            verdict = "converged" if d.get("converged") else "not converged"
            self._line(
                f"  evaluation: {verdict} · completeness {_num(sc.get('completeness_score'))} · coherence "
                f"{_num(sc.get('coherence_score'))} · {', '.join(d.get('reason_codes') or [])}"
            )
        elif event == "refined":
            self._line(f"  refinement: {counted(d['applied'], 'change')} applied, {d['rejected']} rejected")
            for a in d.get("advisories") or []:
                what = a.get("question") or a.get("reason") or a.get("resolution") or ""
                self._line(f"  advisory {a['kind']} {a.get('step_id', '')}: {_short(what, 140)}")
        elif event == "depth":
            self._line(f"  depth decision: {d['decision']} — {d['reason']}")
        elif event == "llm_retry_round":
            self._line(
                f"⏳ provider still unavailable after {counted(d['attempts'], 'attempt')} ({d['cause']}): "
                f"one more round for {d['purpose']} in {d['wait']:.1f} s"
            )
        elif event == "status":
            self._line(str(d.get("message", "")))


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """'1 step', '2 steps'; irregular plurals are given ('pass', 'passes')."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def render_tools(specs: Sequence[ToolSpec], out: TextIO) -> None:
    """One row per tool: name, arguments with their types, return type, example arguments, description."""
    rows = [("NAME", "ARGUMENTS", "RETURNS", "EXAMPLE", "DESCRIPTION")]
    for s in specs:
        props = s.input_schema.get("properties") or {}
        required = set(s.input_schema.get("required") or [])
        args = ", ".join(
            f"{name}: {_type(p)}" + ("" if name in required else f" = {json.dumps(p.get('default'))}")
            for name, p in props.items()
        )
        example = json.dumps(s.example) if s.example else "-"
        rows.append((s.name, args or "-", _type(s.output_schema), example, s.description))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        out.write("  ".join(cell.ljust(w) for cell, w in zip(r[:4], widths, strict=True)) + "  " + r[4] + "\n")


def _type(schema: Mapping[str, Any]) -> str:
    """A JSON schema as a short type name: string, array of integer, Box, string | null, any."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(_type(s) for s in schema["anyOf"])
    if "enum" in schema:
        return "one of " + "|".join(str(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"array of {_type(schema.get('items') or {})}"
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    return str(kind) if kind else "any"


def _num(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "-"


def render_result(result: RunResult, out: TextIO) -> None:
    w = out.write
    plan = result.plan
    if plan:
        w(f"\nGoal: {plan['goal']}\n")
        for s in plan["steps"]:
            mark = _MARK.get(s["status"], "?")
            mode = s.get("mode") or "-"
            w(f"{mark} {s['step_id']} [{s['status']}, {mode}] {s['description']}\n")
            if s["status"] == "complete":
                w(f"    output: {_short(s.get('step_output'), 400)}\n")
            for e in [*(s.get("errors") or []), *(s.get("notes") or [])]:
                w(f"    note: {e}\n")
    c, b = result.counts, result.budget
    w(
        f"\n{result.status.value}: {b['llm_calls']} LLM calls (cap {b['max_llm_calls']}), "
        f"{c['deterministic_repairs']} deterministic repairs, {c['llm_repairs']} LLM repairs, "
        f"{c['fallbacks']} fallbacks, TTL {b['ttl_remaining']}/{b['ttl']} left · run {result.correlation_id}\n"
    )
    if result.converged is not None and result.passes:
        conv = result.convergence or {}
        sc = conv.get("scores") or {}
        verdict = "converged" if result.converged else "not converged"
        passes = counted(result.passes, "pass", "passes")
        w(
            f"{verdict} after {passes}: completeness {_num(sc.get('completeness_score'))}, "
            f"coherence {_num(sc.get('coherence_score'))}, reasons {', '.join(conv.get('reason_codes') or ['-'])}\n"
        )
    if result.answer is not None:
        w(f"answer: {_short(result.answer, 400)}\n")
    if result.status is RunStatus.TTL_EXPIRED and result.ttl_expiration is not None:
        t = result.ttl_expiration
        w(f"expired ({t.expiration_type.value}, phase {t.phase}): {t.message}\n")
    # an error is reported once, by the CLI on stderr
