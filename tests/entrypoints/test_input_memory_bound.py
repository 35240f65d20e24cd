"""`aeon run --plan` on any file under 1 MiB ends within seconds in 1 GiB of address space (issue 18, "Done when").

Each case runs the real CLI in a child process under RLIMIT_AS = 1 GiB: an alias bomb that once grew to 24 GB, deep
and duplicate-key plans, and a legitimate-looking plan just under the cap, which has to be parsed in full.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_harness import SUM_STEP, scripted_config

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS bounds the address space on Linux")

GIB = 1 << 30
MAX_DOCUMENT_BYTES = 1 << 20  # the plan size cap (aeon.adapters.documents)
LIMITED_AEON = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({GIB}, {GIB}))
from aeon.entrypoints.cli import main
sys.argv[0] = "aeon"
main()
"""

ALIAS_BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{b}: &{b} [{', '.join([f'*{a}'] * 10)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True))
    + "goal: *i\nsteps: [{step_id: s1, description: d, tool: calculator, args: {expression: '1+1', x: *i}}]\n"
)


def _near_cap_plan() -> str:
    """A YAML plan of steps just under the size cap: parsed in full, refused only for its number of steps."""
    step = "- step_id: s{i}\n  description: Add {i} and {i}\n  tool: calculator\n  args: {{expression: '{i} + {i}'}}\n"
    out, i = ["goal: add many numbers\nsteps:\n"], 0
    size = len(out[0])
    while size < MAX_DOCUMENT_BYTES - 200:
        i += 1
        out.append(step.format(i=i))
        size += len(out[-1])
    return "".join(out)


PLANS = {
    "alias-bomb.yaml": (ALIAS_BOMB, "anchors and aliases are not accepted"),
    "deep.json": (
        json.dumps({"goal": "g", "steps": [{**SUM_STEP, "args": {"x": "<>"}}]}).replace(
            '"<>"', "[" * 400_000 + "]" * 400_000
        ),
        "nested deeper than 100 levels",
    ),
    "deep.yaml": ("goal: g\nsteps:\n- step_id: s1\n  args: " + "[" * 400_000 + "]" * 400_000 + "\n", "nested deeper"),
    "dup.json": ('{"goal": "g", "steps": [], "steps": [' + json.dumps(SUM_STEP) + "]}", "duplicate key 'steps'"),
    "near-cap.yaml": (_near_cap_plan(), "steps"),
}


@pytest.mark.parametrize("name", list(PLANS))
def test_run_plan_ends_with_exit_2_within_seconds_in_1_gib(tmp_path: Path, name: str) -> None:
    text, expected = PLANS[name]
    plan = tmp_path / name
    plan.write_text(text, encoding="utf-8")
    assert plan.stat().st_size < MAX_DOCUMENT_BYTES
    config = scripted_config(tmp_path, [])
    env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_")}

    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", LIMITED_AEON, "run", "add", "--plan", str(plan), "--config", str(config), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    took = time.monotonic() - started

    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stderr.startswith(f"aeon: plan {plan}") and expected in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert took < 20, f"{name} took {took:.1f}s"  # generous on a loaded 2-core machine; before: minutes, or a crash


# -- aeon inspect: a history may be 64 MiB, and each JSON value in it costs memory however short its text ----------
MAX_HISTORY_VALUES = 8_000_000  # aeon.adapters.documents


def _history_holding(output: str) -> str:
    """A one-pass history whose only step output is the JSON text `output`."""
    step = {"step_id": "s1", "description": "d", "status": "complete", "tool": "t", "agent": None, "step_output": 0}
    passes = [{"pass_number": 1, "final_plan_state": {"steps": [step]}}]
    doc = {"execution_id": "e", "task_input": "t", "passes": passes}
    return json.dumps(doc).replace('"step_output": 0', f'"step_output": {output}')


def _inspect_in_1_gib(tmp_path: Path, text: str) -> tuple[subprocess.CompletedProcess[str], float]:
    history = tmp_path / "h.json"
    history.write_text(text, encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", LIMITED_AEON, "inspect", str(history)], capture_output=True, text=True, timeout=300
    )
    return done, time.monotonic() - started


def test_inspect_refuses_a_history_of_too_many_values_with_exit_2_in_1_gib(tmp_path: Path) -> None:
    # 30 MB of empty lists: 10 million values, several GB once parsed (before: a MemoryError after ~20 s)
    done, took = _inspect_in_1_gib(tmp_path, _history_holding("[" + ",".join(["[]"] * 10_000_000) + "]"))
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stderr.startswith(f"aeon: history {tmp_path / 'h.json'} holds up to "), done.stderr[-2000:]
    assert f"more than the {MAX_HISTORY_VALUES:,}" in done.stderr and len(done.stderr.splitlines()) == 1
    assert done.stdout == "" and took < 20, took


def test_inspect_reads_a_history_just_under_the_value_cap_in_1_gib(tmp_path: Path) -> None:
    # the costliest values per counted one (distinct short strings), one of them credential-shaped so that the
    # whole output is walked by the redaction too
    values = [f'"{i % 100:02d}"' for i in range(MAX_HISTORY_VALUES - 200_000)]
    done, took = _inspect_in_1_gib(tmp_path, _history_holding("[" + ",".join([*values, '"token=abc"']) + "]"))
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "token=[REDACTED]" in done.stdout and "abc" not in done.stdout
    assert took < 120, took
