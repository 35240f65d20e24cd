"""Every bench under bench/ runs in its --quick mode, so a bench that breaks fails CI instead of rotting."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "bench").glob("*.py"))
HELPERS = sorted(p for p in (ROOT / "bench" / "helpers").glob("*.py") if p.name != "__init__.py")


def test_every_module_in_bench_is_a_bench_and_every_helper_is_one_a_bench_imports() -> None:
    assert SCRIPTS, "no bench scripts found"
    assert all('if __name__ == "__main__":' in p.read_text() for p in SCRIPTS), "a module in bench/ is no script"
    sources = "\n".join(p.read_text() for p in SCRIPTS)
    imported = set(re.findall(r"\bhelpers\.(\w+)", sources))
    listed = re.findall(r"^from helpers import (.+)$", sources, re.M)
    imported |= {m for line in listed for m in re.findall(r"\w+", line)}
    assert {p.stem for p in HELPERS} <= imported, {p.stem for p in HELPERS} - imported


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
