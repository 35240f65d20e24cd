"""A log that cannot be written stops the run before anything is spent; records lost later fail the run.

A 10 MB model answer through `aeon run`: the log keeps it once (capped), the run itself loses nothing.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aeon.adapters.eventlog.settings import LogSettings
from aeon.adapters.llm.scripted import ScriptedLLM

from cli_harness import (
    REQUEST,
    SUM_STEP,
    assert_exit,
    invoke,
    log_of,
    one_line,
    plan_json,
    records,
    scripted_config,
)

pytestmark = pytest.mark.usefixtures("isolated_env")


AEON = Path(sys.executable).parent / "aeon"


SAY_STEP = {"step_id": "s2", "description": "State the result of s1", "agent": "llm"}


SCRIPT = [plan_json(SUM_STEP, SAY_STEP), "The sum is 15."]


def _parent_is_a_file(tmp_path: Path) -> tuple[Path, str]:
    (tmp_path / "not-a-folder").write_text("x", encoding="utf-8")
    return tmp_path / "not-a-folder" / "runs.jsonl", "Not a directory"


def _read_only_folder(tmp_path: Path) -> tuple[Path, str]:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders; the parent-is-a-file case covers an unopenable log")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    return folder / "runs.jsonl", "Permission denied"


def _full_device(tmp_path: Path) -> tuple[Path, str]:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    return Path("/dev/full"), "No space left on device"


UNWRITABLE = [_parent_is_a_file, _read_only_folder, _full_device]


UNWRITABLE_IDS = ["parent-is-a-file", "read-only-folder", "full-device"]


@pytest.fixture
def llm_calls(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every call the scripted model answers, so a test can prove nothing was spent."""
    calls: list[object] = []
    complete = ScriptedLLM.complete

    async def counted(self: ScriptedLLM, *args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return await complete(self, *args, **kwargs)

    monkeypatch.setattr(ScriptedLLM, "complete", counted)
    return calls


@pytest.mark.parametrize("unwritable", UNWRITABLE, ids=UNWRITABLE_IDS)
def test_an_unwritable_log_stops_the_run_with_exit_2_and_one_line_before_any_llm_call(
    tmp_path: Path, llm_calls: list[object], unwritable: Callable[[Path], tuple[Path, str]]
) -> None:
    path, reason = unwritable(tmp_path)
    result = invoke("run", REQUEST, "--config", scripted_config(tmp_path, SCRIPT), "--log-file", path, "--quiet")

    assert_exit(result, 2)
    line = one_line(result.stderr)
    assert str(path) in line and reason in line, line
    assert result.stdout == ""
    assert llm_calls == []


@pytest.mark.parametrize("unwritable", UNWRITABLE, ids=UNWRITABLE_IDS)
def test_an_unwritable_log_under_json_is_one_error_document_with_exit_2(
    tmp_path: Path, llm_calls: list[object], unwritable: Callable[[Path], tuple[Path, str]]
) -> None:
    path, reason = unwritable(tmp_path)
    result = invoke("run", REQUEST, "--config", scripted_config(tmp_path, SCRIPT), "--log-file", path, "--json")

    assert_exit(result, 2)
    doc = json.loads(result.stdout)
    assert doc == {
        "status": "error",
        "error": {"code": "AEON.EVENTLOG.UNAVAILABLE", "message": doc["error"]["message"]},
    }
    assert str(path) in doc["error"]["message"] and reason in doc["error"]["message"]
    assert llm_calls == []


def _limited_file_size(limit: int) -> Callable[[], None]:
    def limit_size() -> None:  # runs in the child: no file grows past `limit` bytes (EFBIG after that)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_size


def _aeon(*args: str | Path, cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a user's shell runs it (CliRunner replaces stdout and swallows exits)."""
    return subprocess.run(
        [str(AEON), *map(str, args)],
        text=True,
        timeout=60,
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if not k.startswith("AEON_") or k == "AEON_DURABLE"},
        check=False,
        **kwargs,
    )


@pytest.mark.skipif(not AEON.exists(), reason="the aeon console script is not installed next to this interpreter")
@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_records_lost_later_in_the_run_are_an_error_with_exit_4_counting_them(tmp_path: Path, as_json: bool) -> None:
    """A real write failure mid-run: the child may not grow a file past its first log record (RLIMIT_FSIZE)."""
    whole, cut = tmp_path / "a", tmp_path / "b"  # same-length folders: the same run writes same-length records
    whole.mkdir(), cut.mkdir()
    assert_exit(invoke("run", REQUEST, "--config", scripted_config(whole, SCRIPT), "--json"), 0)
    whole_run = log_of(whole).read_bytes().splitlines(keepends=True)
    lost = len(whole_run) - 1
    flags = ["--json"] if as_json else []
    proc = _aeon(
        "run", REQUEST, "--config", scripted_config(cut, SCRIPT), "--quiet", *flags,
        cwd=cut,
        capture_output=True,
        preexec_fn=_limited_file_size(len(whole_run[0]) + 10),
    )  # fmt: skip

    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert json.loads(log_of(cut).read_bytes().splitlines()[0])["event"] == "run_start"
    if as_json:
        doc = json.loads(proc.stdout)
        assert doc["status"] == "error"
        assert doc["error"]["code"] == "AEON.EVENTLOG.LOST"
        assert f"lost {lost} records" in doc["error"]["message"] and "File too large" in doc["error"]["message"]
        assert any(f"lost {lost} records" in w for w in doc["warnings"])
        assert doc["outputs"]["s1"]["output"] == 15 and doc["outputs"]["s2"]["output"] == "The sum is 15."
    else:
        assert "The sum is 15." in proc.stdout
        last = proc.stderr.splitlines()[-1]
        assert f"lost {lost} records" in last and "File too large" in last, proc.stderr


def test_a_complete_log_adds_no_warning(tmp_path: Path) -> None:
    result = invoke("run", REQUEST, "--config", scripted_config(tmp_path, SCRIPT), "--json")
    assert_exit(result, 0)
    assert json.loads(result.stdout)["warnings"] == []
    assert records(log_of(tmp_path))[0]["event"] == "run_start"


# -- A 10 MB model answer through `aeon run`: the log keeps it once (capped), the run itself loses nothing ----------


TEN_MB = 10 * 1024 * 1024


def run_answering(folder: Path, answer: str) -> tuple[dict[str, Any], Path]:
    folder.mkdir()
    config = scripted_config(folder, [])
    # JSON is YAML, and json.dumps is ~10x faster than yaml.safe_dump on a 10 MB string
    script = {"responses": [plan_json(SUM_STEP, SAY_STEP), answer]}
    (folder / "script.yaml").write_text(json.dumps(script), encoding="utf-8")
    history = folder / "history.json"
    result = invoke("run", REQUEST, "--config", config, "--json", "--quiet", "--history", history)
    assert_exit(result, 0)
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc, history


def test_a_10_mb_answer_is_logged_once_and_capped_while_the_result_keeps_all_of_it(tmp_path: Path) -> None:
    answer = "".join(f"Line {i}: the sum of 5 and 10 is 15.\n" for i in range(TEN_MB // 36))[:TEN_MB].strip()
    small_doc, _ = run_answering(tmp_path / "small", "The sum is 15.")
    doc, history = run_answering(tmp_path / "big", answer)

    # nothing of the run is lost: the answer in full in the result and the history, every record still written
    assert doc["outputs"]["s2"]["output"] == answer and doc["answer"] == answer
    assert json.dumps(answer) in history.read_text(encoding="utf-8")
    small_log, big_log = records(log_of(tmp_path / "small")), records(log_of(tmp_path / "big"))
    assert [r["event"] for r in big_log] == [r["event"] for r in small_log]
    assert doc["warnings"] == small_doc["warnings"] == []

    # The bound: the short-answer run's log, plus one capped copy of the answer (log.max_string_bytes), plus 4 KiB
    # for the markers that stand in for its repeats. Without the cap and the markers it is several copies of 10 MB.
    cap = LogSettings().max_string_bytes
    size, small_size = log_of(tmp_path / "big").stat().st_size, log_of(tmp_path / "small").stat().st_size
    assert size <= small_size + cap + 4096, (size, small_size)
    lines = log_of(tmp_path / "big").read_text(encoding="utf-8").splitlines()
    assert sum("Line 17: the sum" in line for line in lines) == 1  # its head is written once


def test_the_log_settings_cap_records_and_rotate_the_file(tmp_path: Path) -> None:
    log = {"max_record_bytes": 1024, "max_string_bytes": 1024, "rotate_bytes": 4096, "keep": 2}
    config = scripted_config(tmp_path, [plan_json(SUM_STEP)] * 3, log=log)
    for _ in range(3):
        assert_exit(invoke("run", REQUEST, "--config", config, "--quiet"), 0)

    path = log_of(tmp_path)
    files = [path.with_name(path.name + ".2"), path.with_name(path.name + ".1"), path]
    assert all(f.is_file() for f in files) and not path.with_name(path.name + ".3").exists()
    lines = [line for f in files for line in f.read_bytes().splitlines()]
    assert all(len(line) <= 1024 for line in lines)
    assert all(f.stat().st_size <= 4096 for f in files)
    assert records(path)[-1]["event"] == "run_end"
    assert all(isinstance(json.loads(line)["seq"], int) for line in lines)
