"""A non-editable install (`pip install .`) works like the checkout: the base config ships inside the package.

The wheel is built without build isolation and installed with `--no-deps --no-index` into a temporary target, so
no network is needed: the dependencies come from this interpreter's environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEMO_CONFIG = ROOT / "config" / "scripted-demo.yaml"
REQUEST = "calculate the sum of 5 and 10"


def _pip(*args: str | Path, cwd: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *map(str, args)]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this checkout installed into a fresh target directory; returns that directory."""
    pytest.importorskip("setuptools", minversion="77")  # the dev extra pins it; PEP 639 licence strings need 77
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"  # build from a copy: a build writes build/ and *.egg-info next to the sources
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    _pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "--wheel-dir", work / "dist", source, cwd=work)
    (wheel,) = (work / "dist").glob("aeon-*.whl")
    _pip("install", "--no-deps", "--no-index", "--target", work / "site", wheel, cwd=work)
    return work / "site"


def _aeon(site: Path, cwd: Path, *args: str | Path, env: Mapping[str, str] = {}) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AEON_") and k != "PYTHONPATH"}
    return subprocess.run(
        [str(site / "bin" / "aeon"), *map(str, args)],
        cwd=cwd,
        env={**clean, "PYTHONPATH": str(site), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_installed_package_is_the_one_that_runs(installed: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import aeon.entrypoints.cli as m; print(m.__file__)"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(installed)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(proc.stdout.strip()).is_relative_to(installed)


def test_env_markers_of_the_base_config_work_outside_the_repo(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text((ROOT / "config" / "scripts" / "sum-5-and-10.yaml").read_text())
    (tmp_path / "aeon.yaml").write_text(yaml.safe_dump({"llm": {"script": "script.yaml"}}))  # no adapter named
    log = tmp_path / "logs" / "mine.jsonl"
    env = {"AEON_LLM_ADAPTER": "scripted", "AEON_LOG_FILE": str(log)}
    proc = _aeon(installed, tmp_path, "run", REQUEST, "--config", "aeon.yaml", "--json", env=env)

    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["outputs"]["s1"]["output"] == 15  # AEON_LLM_ADAPTER chose the scripted model over the local default
    assert log.is_file()  # AEON_LOG_FILE moved the log
    assert not (tmp_path / ".aeon" / "runs.jsonl").exists()  # .aeon/ holds the system database only (durable)
    assert {json.loads(line)["correlation_id"] for line in log.read_text().splitlines()} == {doc["correlation_id"]}


def test_the_shipped_scripted_demo_runs_from_outside_the_repo(installed: Path, tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    proc = _aeon(
        installed, tmp_path, "run", REQUEST, "--config", DEMO_CONFIG, "--json", env={"AEON_LOG_FILE": str(log)}
    )

    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["outputs"]["s1"]["output"] == 15
    assert log.is_file()


def test_the_readme_testing_example_passes_against_the_installed_package(installed: Path, tmp_path: Path) -> None:
    from cli_harness import readme_files, run_user_pytest

    files = {**readme_files("Your own tools"), **readme_files("Testing your tools and configs")}
    for name in ("mytools.py", "test_mytools.py"):
        (tmp_path / name).write_text(files[name], encoding="utf-8")
    probe = tmp_path / "test_where.py"
    probe.write_text(
        f"import aeon.testing\n\ndef test_where():\n    assert aeon.testing.__file__.startswith({str(installed)!r})\n"
    )
    proc = run_user_pytest(tmp_path, "test_mytools.py", "test_where.py", pythonpath=str(installed))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


def test_the_python_api_examples_run_against_the_installed_package(installed: Path, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AEON_") and k != "PYTHONPATH"}
    where = "import aeon, aeon.events; print(aeon.__file__); print(aeon.events.__file__)"
    for args in (["-c", where], ["examples/quickstart.py"], ["examples/stream_events.py"]):
        proc = subprocess.run(
            [sys.executable, *args],
            cwd=tmp_path,
            env={**clean, "PYTHONPATH": str(installed)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        if args[0] == "-c":
            assert all(Path(line).is_relative_to(installed) for line in proc.stdout.splitlines())
        else:
            assert proc.stdout.splitlines()[-1].endswith(("1 pass", "completed: sunny in Paris"))


def test_the_local_models_chat_template_ships_in_the_package(installed: Path) -> None:
    shipped = installed / "aeon" / "adapters" / "llm" / "completion.jinja"
    source = ROOT / "src" / "aeon" / "adapters" / "llm" / "completion.jinja"
    assert shipped.read_text(encoding="utf-8") == source.read_text(encoding="utf-8")
