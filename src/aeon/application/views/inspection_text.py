"""`aeon inspect`'s report as text: the run, each pass, the approvals, the ledger and the patterns across passes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from aeon.application.views.ledger import ledger_lines


def inspection_text(report: dict[str, Any]) -> str:
    """The report of `analyse` as `aeon inspect` prints it (before it is made safe for a terminal)."""
    return "".join(_lines(report))


def _lines(report: dict[str, Any]) -> Iterator[str]:
    yield from _heading(report)
    for p in report["passes"]:
        yield from _pass(p)
    for a in report["approvals"]:
        edit = f" with edited arguments {a['args']} (asked: {a['asked']})" if a["edited"] else f" {a['asked']}"
        why = f": {a['reason']}" if a["reason"] else ""
        yield f"approval pass {a['pass']} step {a['step_id']} {a['tool']}{edit}: {a['verdict']} by {a['by']}{why}\n"
    yield from ledger_lines(report.get("ledger"))
    yield from _patterns(report)


def _heading(report: dict[str, Any]) -> Iterator[str]:
    """The run, its result and each task profile inferred."""
    final = report["final_result"]
    yield f"run {report['execution_id']}: {report['task_input']!r}\n"
    yield f"result: {final.get('result_type')} · converged {final.get('converged')} · output {final.get('output')!r}\n"
    for prof in report["profiles"]:
        yield (
            f"profile v{prof.get('profile_version')}: depth {prof.get('reasoning_depth')}, information "
            f"{prof.get('information_sufficiency')}, tools {prof.get('expected_tool_usage')}, breadth "
            f"{prof.get('output_breadth')}, confidence {prof.get('confidence_requirement')} — "
            f"{prof.get('raw_inference')}\n"
        )


def _pass(p: dict[str, Any]) -> Iterator[str]:
    """One pass: timing, phases, the plan's steps, convergence, validation issues, refinements, depth decision."""
    t = p["timing"] or {}
    yield (
        f"\npass {p['pass_number']} · TTL {p['ttl_remaining']} · {t.get('duration_seconds', 0):.3f}s · "
        f"LLM {p['llm_usage'].get('calls', 0)} calls\n"
    )
    phases = ", ".join(f"{ph['phase']} {ph['duration_seconds']:.3f}s ({ph['outcome']})" for ph in p["phases"])
    yield f"  phases: {phases}\n"
    for s in p["plan"]:
        how = s["tool"] or ("llm" if s["agent"] else "-")
        mark = f" · {s['untrusted']}" if s.get("untrusted") else ""  # written from untrusted data
        yield f"  {s['step_id']} [{s['status']}] {how}: {s['description']} → {s['step_output']!r}{mark}\n"
    if p["converged"] is not None:
        sc = p["scores"]
        yield (
            f"  convergence: {'converged' if p['converged'] else 'not converged'} · completeness "
            f"{sc['completeness']} · coherence {sc['coherence']} · reasons {', '.join(p['reason_codes'])}\n"
        )
    for i in p["validation_issues"]:
        yield f"  issue {i['issue_id']} {i['type']}/{i['severity']} ({i['source']}): {i['description']}\n"
    for r in p["refinements"]:
        flag = "applied" if r["applied"] else "rejected (advisory)"
        why = f" ← {', '.join(str(x) for x in r['triggered_by'])}" if r["triggered_by"] else ""
        yield f"  refinement {r['action']} {r['target']}: {flag} — {r['reason']}{why}\n"
    d = p["depth"]
    if d:
        yield f"  depth decision: {d.get('decision')} — {d.get('decision_reason')}\n"
        yield (
            f"  depth: {d.get('detected_complexity')} · mode {d.get('reasoning_mode')} · "
            f"allocated TTL {d.get('allocated_ttl')} — {d.get('adjustment_reason')} "
            f"[{', '.join(d.get('heuristics_used') or [])}]\n"
        )


def _patterns(report: dict[str, Any]) -> Iterator[str]:
    """What the passes show together: fragments refined repeatedly, convergence blockers, manual interventions,
    advisories."""
    pat = report["patterns"]
    yield "\npatterns:\n"
    yield f"  fragments refined in several passes: {', '.join(pat['fragments_refined_repeatedly']) or 'none'}\n"
    blockers = ", ".join(f"{k}×{v}" for k, v in pat["convergence_blockers"].items())
    yield f"  convergence blockers: {blockers or 'none'}\n"
    for m in pat["manual_intervention"]:
        yield f"  manual intervention needed: {m['target']} — {m['reason']}\n"
    for a in report["advisories"]:
        yield f"  advisory ({a.get('kind')}, pass {a.get('pass_number')}): {a.get('reason') or a.get('detail')}\n"
