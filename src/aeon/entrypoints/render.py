"""Human rendering: live progress on stderr and the final result on stdout."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import msgspec
import typer

from aeon.application.redaction import Redactor
from aeon.application.results import RunResult, RunStatus
from aeon.application.schemas import one_line
from aeon.domain.evaluation import ConvergenceAssessment
from aeon.domain.tools import ToolSpec
from aeon.entrypoints.failures import (
    EXIT_AWAITING,
    EXIT_DENIED,
    EXIT_ERROR,
    EXIT_EXPIRED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNVERIFIED,
)
from aeon.entrypoints.secrets import redactor_for
from aeon.entrypoints.terminal import json_safe, terminal_safe

MARKS = {"complete": "✓", "failed": "✗", "invalid": "⊘", "pending": "·", "running": "▶"}


# What a human sees first on each line decides its colour; a pipe or NO_COLOR gets plain text (rich decides).
_STYLES = {"✓": "green", "✗": "red", "⊘": "yellow", "⚠": "yellow", "⏳": "yellow", "↻": "cyan", "⤷": "yellow"}
_CAPS = {
    "ttl": "the pass budget (TTL) ran out",
    "max_llm_calls": "the LLM-call cap was reached",
    "max_tokens": "the token cap was reached",
    "max_seconds": "the time cap ran out",
    "max_cost": "the cost cap would have been crossed",
}


class Lines:
    """Writes whole lines to a stream, coloured on a terminal and plain everywhere else.

    Where rich would add no colour (a pipe or a file, no FORCE_COLOR or TTY_COMPATIBLE, no notebook) a line is
    written as rich writes it there, tabs expanded to columns of 8, and rich is not even imported: it costs a run's
    start about as much as the rest of the display. A line whose tabs sit among non-ASCII characters (rich expands
    them by terminal cells) still goes through rich.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._console: Any = _console(stream) if _may_colour(stream) else None

    def __call__(self, text: str, style: str | None = None) -> None:
        shown = terminal_safe(text)
        if self._console is None and ("\t" not in shown or shown.isascii()):
            self._stream.write(shown.expandtabs() + "\n")
            self._stream.flush()
            return
        self._console = self._console or _console(self._stream)
        self._console.print(shown, style=style or _STYLES.get(text.lstrip()[:1]))


def _may_colour(stream: TextIO) -> bool:
    """Whether rich could colour this stream (its own test, give or take: when in doubt, rich decides)."""
    if "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ or "IPython" in sys.modules:
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream: rich says no terminal too
        return False


def _console(stream: TextIO) -> Any:
    from rich.console import Console

    return Console(file=stream, highlight=False, markup=False, emoji=False, soft_wrap=True)


def short(value: Any, limit: int = 160) -> str:
    return one_line(value, limit)


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """'1 step', '2 steps'; irregular plurals are given ('pass', 'passes')."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def render_tools(specs: Sequence[ToolSpec], out: TextIO) -> None:
    """One row per tool: name, arguments with their types, return type, example arguments, description; and, when
    an MCP server serves any of them, a SERVER column after the name ("-" for a Python tool)."""
    served = any(s.server is not None for s in specs)
    rows = [("NAME", *(["SERVER"] if served else []), "ARGUMENTS", "RETURNS", "EXAMPLE", "DESCRIPTION")]
    for s in specs:
        props = s.input_schema.get("properties") or {}
        required = set(s.input_schema.get("required") or [])
        args = ", ".join(
            f"{name}: {_type(p) if isinstance(p, Mapping) else 'any'}"
            + ("" if name in required or not isinstance(p, Mapping) else f" = {json.dumps(p.get('default'))}")
            for name, p in props.items()
        )
        example = json.dumps(s.example) if s.example else "-"
        server = [s.server or "-"] if served else []
        rows.append((s.name, *server, args or "-", _type(s.output_schema), example, s.description))
    last = len(rows[0]) - 1
    widths = [max(len(r[i]) for r in rows) for i in range(last)]
    for r in rows:
        row = "  ".join(cell.ljust(w) for cell, w in zip(r[:last], widths, strict=True)) + "  " + r[last]
        out.write(terminal_safe(row) + "\n")


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


def verdict(assessment: ConvergenceAssessment | None) -> str:
    """A convergence assessment in words: the verdict, each criterion with what decided it, the model's scores."""
    codes = assessment.reason_codes if assessment is not None else []
    why = {"failed_step": "failed", "unfinished_step": "did not run", "unverified_step": "is unverified fallback text"}
    causes = [f"step {c.split(':', 1)[1]} {why[c.split(':', 1)[0]]}" for c in codes if c.split(":", 1)[0] in why]
    words = []
    for code in codes:
        if code == "incomplete" and causes:
            words.append(f"incomplete ({'; '.join(causes)})")
        elif code == "hallucination":
            words.append("a tool claim the tool log does not back")
        elif code == "validation_blocker":
            words.append("a blocking validation issue")
        elif ":" not in code:
            words.append(code)
    sc = assessment.scores if assessment is not None else {}
    scores = f"model's scores: completeness {_num(sc.get('completeness_score'))}, coherence "
    scores += _num(sc.get("coherence_score"))
    head = "converged" if assessment is not None and assessment.converged else "not converged"
    return f"{head}: {', '.join(words) or '-'} · {scores}"


def status_line(result: RunResult) -> str:
    """What happened to the run, in words: completed, stopped by which cap, failed, interrupted."""
    c, b = result.counts, result.budget
    if result.status is RunStatus.TTL_EXPIRED and result.ttl_expiration is not None:
        head = f"stopped early: {_CAPS.get(result.ttl_expiration.cap, result.ttl_expiration.cap)}"
    elif result.status is RunStatus.UNVERIFIED:
        missing = ", ".join(f"{m.step_id} ({m.tool})" for m in result.tool_calls_not_made)
        head = f"unverified: the tool never ran for {missing}; LLM text stands in its place"
    elif result.status is RunStatus.AWAITING_APPROVAL and (r := result.pending_approval) is not None:
        head = (
            f"awaiting approval: step {r.step_id} calls {r.tool} {short(r.args, 200)} — "
            f"aeon approve {result.correlation_id} [--args JSON] or aeon deny {result.correlation_id} --reason TEXT"
        )
    elif result.status is RunStatus.DENIED and result.error is not None:
        head = f"denied: {result.error.message}"
    else:
        head = result.status.value
    return (
        f"{head} · {counted(result.passes, 'pass', 'passes')} (cap {b.ttl}) · "
        f"{counted(b.llm_calls, 'LLM call')} (cap {b.max_llm_calls}), "
        f"{counted(c.deterministic_repairs, 'deterministic repair')}, {counted(c.llm_repairs, 'LLM repair')}, "
        f"{counted(c.fallbacks, 'fallback')} · run {result.correlation_id}"
    )


def result_document(result: RunResult) -> dict[str, Any]:
    """The --json document: the whole result as plain data, without the history (that goes to --history)."""
    doc: dict[str, Any] = msgspec.to_builtins(result)
    doc.pop("history", None)
    return doc


def render_result(result: RunResult, out: TextIO) -> None:
    line = Lines(out)
    plan = msgspec.to_builtins(result.plan) if result.plan is not None else None
    if plan:
        line(f"\nGoal: {plan['goal']}", "bold")
        for s in plan["steps"]:
            mark = MARKS.get(s["status"], "?")
            mode = s.get("mode") or "-"
            line(f"{mark} {s['step_id']} [{s['status']}, {mode}] {s['description']}")
            if s["status"] == "complete":
                line(f"    output: {short(s.get('step_output'), 400)}", "default")
            for e in [*(s.get("errors") or []), *(s.get("notes") or [])]:
                line(f"    note: {e}", "dim")
    ok = result.status is RunStatus.COMPLETED
    line("\n" + status_line(result), "bold green" if ok else "bold yellow")
    if result.converged is not None and result.passes:
        line(verdict(result.convergence), "green" if result.converged else "yellow")
    if result.answer is not None:
        line(f"answer: {short(result.answer, 400)}", "bold")
    if result.status is RunStatus.TTL_EXPIRED and result.ttl_expiration is not None:
        t = result.ttl_expiration
        line(f"expired ({t.expiration_type.value}, phase {t.phase}): {t.message}", "yellow")
    # an error is reported once, by the CLI on stderr


_EXIT = {
    RunStatus.COMPLETED: EXIT_OK,
    RunStatus.TTL_EXPIRED: EXIT_EXPIRED,
    RunStatus.ERROR: EXIT_ERROR,
    RunStatus.INTERRUPTED: EXIT_INTERRUPTED,
    RunStatus.UNVERIFIED: EXIT_UNVERIFIED,
    RunStatus.AWAITING_APPROVAL: EXIT_AWAITING,
    RunStatus.APPROVAL_EXPIRED: EXIT_EXPIRED,
    RunStatus.FAILED: EXIT_ERROR,
    RunStatus.DENIED: EXIT_DENIED,
}
SIGNAL_EXIT = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: 128 + signal.SIGTERM}


def present(
    result: RunResult,
    *,
    as_json: bool,
    history: Path | None,
    received: list[int] | None = None,
    redactor: Redactor | None = None,
) -> None:
    """Write the history, print the result (or its JSON document) and exit with the status's code. The history file
    is a durable sink: fully redacted. What is printed is the caller's: redacted of the configured secrets only (what
    the run produced, a token a tool returned, is shown whole; Redactor.for_caller)."""
    redactor = redactor or redactor_for(None)
    kept = redactor.struct(result, RunResult).history
    result = redactor.for_caller().struct(result, RunResult)
    if history is not None and kept is not None:
        try:
            history.parent.mkdir(parents=True, exist_ok=True)
            document = msgspec.json.format(msgspec.json.encode(kept), indent=2).decode()
            history.write_text(json_safe(document), encoding="utf-8")
        except OSError as exc:
            typer.echo(f"aeon: warning: cannot write history to {history}: {exc.strerror or exc}", err=True)
    if as_json:
        sys.stdout.write(json_safe(msgspec.json.encode(result_document(result)).decode()) + "\n")
    else:
        render_result(result, sys.stdout)
    if result.error is not None and not as_json:
        typer.echo(f"aeon: {terminal_safe(result.error.message)}", err=True)
    if result.status is RunStatus.INTERRUPTED and received:
        raise typer.Exit(SIGNAL_EXIT.get(signal.Signals(received[0]), EXIT_INTERRUPTED))
    raise typer.Exit(_EXIT[result.status])
