"""Live progress for a human on stderr: one line per event, so a long LLM call never looks like a hang."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from aeon.entrypoints.render import MARKS, Lines, counted, short, verdict

# a step's args as progress shows them: enough to recognise the call; the log and --history keep them whole
ARGS_SHOWN = 200


class ConsoleProgress:
    """ProgressPort that prints one line per event, so a long LLM call never looks like a hang."""

    def __init__(self, stream: TextIO, *, verbose: bool = True) -> None:
        self._line = Lines(stream)
        self._verbose = verbose

    def update(self, event: str, data: Mapping[str, Any]) -> None:
        d = data
        if event == "phase":
            self._line(f"── pass {d.get('pass')} · {d.get('phase')}", "bold cyan")
        elif event == "plan":
            plan = d["plan"]
            self._line(f"plan: {plan['goal']} ({counted(len(plan['steps']), 'step')})")
            for s in plan["steps"]:
                how = f"tool {s['tool']} {short(s.get('args') or {}, ARGS_SHOWN)}" if s.get("tool") else "agent llm"
                self._line(f"  {s['step_index']}. [{s['step_id']}] {s['description']} — {how}")
        elif event == "step_start":
            self._line(f"▶ [{d['index']}/{d['total']}] {d['step_id']}: {d['description']}")
        elif event == "step_end":
            mark = MARKS.get(str(d["status"]), "?")
            detail = short(d["output"]) if d["status"] == "complete" else "; ".join(d.get("errors") or [])
            self._line(f"{mark} {d['step_id']} {d['status']} ({d.get('mode') or '-'}): {detail}")
        elif event == "warning":
            self._line(f"⚠ {d['message']}")
        elif event == "step_repaired":
            self._line(f"↻ {d['step_id']} repaired: now calls {d['tool']} {short(d.get('args') or {}, ARGS_SHOWN)}")
        elif event == "step_fallback":
            self._line(f"⤷ {d['step_id']} could not be repaired: falling back to LLM reasoning")
        elif event == "supervisor" and self._verbose:
            ok = "ok" if d.get("succeeded") else "failed"
            self._line(f"  supervisor {d['kind']} on {d['target']} ({ok}): {short(d.get('detail', ''), 120)}")
        elif event == "llm_start" and self._verbose:
            where = f" · step {d['step']}" if d.get("step") else ""
            self._line(f"  … LLM {d['purpose']} ({d.get('phase')}{where})", "dim")
        elif event == "llm_end" and self._verbose:
            rate = d.get("tokens_per_s")
            speed = f" at {rate:.1f} tok/s" if isinstance(rate, float) else ""
            self._line(f"  … {d['completion_tokens']} tokens{speed}", "dim")
        elif event == "assessment":
            self._line(f"  evaluation: {verdict(d)}", "green" if d.get("converged") else "yellow")
        elif event == "refined":
            self._line(f"  refinement: {counted(d['applied'], 'change')} applied, {d['rejected']} rejected")
            for a in d.get("advisories") or []:
                what = a.get("question") or a.get("reason") or a.get("resolution") or ""
                self._line(f"  advisory {a['kind']} {a.get('step_id', '')}: {short(what, 140)}")
        elif event == "depth":
            self._line(f"  depth decision: {d['decision']} — {d['reason']}")
        elif event == "llm_retry_round":
            self._line(
                f"⏳ provider still unavailable after {counted(d['attempts'], 'attempt')} ({d['cause']}): "
                f"one more round for {d['purpose']} in {d['wait']:.1f} s"
            )
        elif event == "status":
            self._line(str(d.get("message", "")))
