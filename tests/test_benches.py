"""Every bench under bench/ runs in its --quick mode, so a bench that breaks fails CI instead of rotting."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "bench").glob("*.py") if 'if __name__ == "__main__":' in p.read_text())


def test_every_bench_is_a_script_or_a_module_a_bench_imports() -> None:
    modules = {p.stem for p in (ROOT / "bench").glob("*.py")} - {p.stem for p in SCRIPTS}
    sources = "\n".join(p.read_text() for p in SCRIPTS)
    assert SCRIPTS, "no bench scripts found"
    assert all(re.search(rf"\bimport {m}\b", sources) for m in modules), modules


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_the_bench_runs_in_its_quick_mode_and_prints_figures(script: Path) -> None:
    assert "--quick" in script.read_text(), f"{script.name} has no --quick mode"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_")}
    done = subprocess.run(
        [sys.executable, str(script), "--quick"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-1500:]
    # figures, or one line saying which part needs what is not installed here (the [local] extra, a peer framework)
    assert re.search(r"\d", done.stdout) or done.stdout.startswith("skipped:"), done.stdout
