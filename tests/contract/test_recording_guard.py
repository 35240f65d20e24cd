"""docs/recording.md's re-record commands, run where they cannot record, keep the committed cassettes.

pytest-recording deletes a cassette as it opens it under --record-mode=rewrite; without the provider's key, or with
no server listening, the test must stop first with one line. Run on a copy of the contract tests and cassettes, so a
regression cannot delete the real ones.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aeon.adapters.llm._llama_server import free_loopback_port

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
COPIED = ("conftest.py", "cassette_format.py", "test_e2e_run.py", "test_e2e_local.py")
INI = """[pytest]
addopts = -q -p no:cacheprovider --strict-markers
pythonpath = tests/contract
"""


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    contract = tmp_path / "tests" / "contract"
    contract.mkdir(parents=True)
    for name in COPIED:
        shutil.copy2(TESTS / "contract" / name, contract / name)
    shutil.copytree(TESTS / "cassettes" / "test_e2e_run", tmp_path / "tests" / "cassettes" / "test_e2e_run")
    (tmp_path / "pytest.ini").write_text(INI, encoding="utf-8")
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "tests" / "cassettes").rglob("*.yaml"))}


def rerecord(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AEON_CONTRACT_") and not k.endswith("_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", *args, "--record-mode=rewrite"],
        cwd=root,
        env={**clean, "AEON_DURABLE": "false", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def reasons(output: str) -> list[str]:
    return [line for line in output.splitlines() if "not recording:" in line]


def test_rerecording_a_hosted_provider_without_its_key_keeps_the_cassettes(copy: Path) -> None:
    before = snapshot(copy)
    proc = rerecord(
        copy,
        "tests/contract/test_e2e_run.py",
        "-k",
        "openai",
        AEON_CONTRACT_OPENAI_BASE_URL="https://api.openai.com/v1",
    )

    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert snapshot(copy) == before
    lines = reasons(proc.stdout)
    assert lines, proc.stdout
    assert all("OPENAI_API_KEY is not set for https://api.openai.com/v1" in line for line in lines)
    assert "Traceback" not in proc.stdout


def test_rerecording_against_a_local_server_that_is_not_running_keeps_the_cassettes(copy: Path) -> None:
    before = snapshot(copy)
    url = f"http://127.0.0.1:{free_loopback_port()}/v1"  # nothing listens there
    proc = rerecord(
        copy,
        "tests/contract/test_e2e_run.py",
        AEON_CONTRACT_OPENAI_BASE_URL=url,
        AEON_CONTRACT_ANTHROPIC_BASE_URL=url.removesuffix("/v1"),
    )

    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert snapshot(copy) == before
    assert any(
        f"nothing answers at {url} (start it: scripts/serve-local-model.sh)" in line for line in reasons(proc.stdout)
    )


def test_a_test_that_replays_another_tests_cassette_never_records_over_it(copy: Path) -> None:
    before = snapshot(copy)
    proc = rerecord(copy, "tests/contract/test_e2e_local.py")

    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert snapshot(copy) == before
    assert any("replays another test's cassette" in line for line in reasons(proc.stdout)), proc.stdout
