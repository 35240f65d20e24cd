"""A stdout that cannot take the output (a full device, a closed pipe) is one line on stderr and exit 1."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_harness import DEMO_CONFIG, REQUEST, one_line

pytestmark = pytest.mark.usefixtures("isolated_env")
AEON = Path(sys.executable).parent / "aeon"


def _full_stdout() -> int:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    return os.open("/dev/full", os.O_WRONLY)


def _closed_pipe() -> int:
    read, write = os.pipe()
    os.close(read)  # closed before the child starts: its first write to stdout is EPIPE, deterministically
    return write


@pytest.mark.skipif(not AEON.exists(), reason="the aeon console script is not installed next to this interpreter")
@pytest.mark.parametrize(
    ("target", "reason"),
    [(_full_stdout, "No space left on device"), (_closed_pipe, "Broken pipe")],
    ids=["full", "pipe"],
)
@pytest.mark.parametrize(
    "args",
    [["run", REQUEST, "--config", str(DEMO_CONFIG), "--quiet"], ["run", "--json"], ["tools", "--json"]],
    ids=["run", "usage-error-json", "tools"],
)
def test_a_stdout_that_cannot_be_written_is_one_line_on_stderr_and_exit_1(
    tmp_path: Path, target: Callable[[], int], reason: str, args: list[str]
) -> None:
    out = target()
    try:
        proc = subprocess.run(  # the console script: CliRunner replaces stdout; the default log lands in tmp_path
            [str(AEON), *args],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            cwd=tmp_path,
            env={k: v for k, v in os.environ.items() if not k.startswith("AEON_") or k == "AEON_DURABLE"},
            check=False,
        )
    finally:
        os.close(out)

    assert proc.returncode == 1, proc.stderr
    line = one_line(proc.stderr)
    assert line.startswith("aeon: ") and "stdout" in line and reason in line, proc.stderr


@pytest.mark.skipif(not AEON.exists(), reason="the aeon console script is not installed next to this interpreter")
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_listing_whose_reader_stops_early_ends_quietly(tmp_path: Path, as_json: bool) -> None:
    """`aeon runs | head`: the reader closing the pipe is no failure of the listing (no "Broken pipe", exit 0)."""
    out = _closed_pipe()
    try:
        proc = subprocess.run(
            [str(AEON), "runs", *(["--json"] if as_json else [])],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            cwd=tmp_path,
            env={k: v for k, v in os.environ.items() if not k.startswith("AEON_")},
            check=False,
        )
    finally:
        os.close(out)

    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
