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
