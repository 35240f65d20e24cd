"""A 10 MB model answer through `aeon run`: the log keeps it once (capped), the run itself loses nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aeon.entrypoints.settings import LogSettings

from cli_harness import REQUEST, SUM_STEP, assert_exit, invoke, log_of, plan_json, records, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env")
SAY_STEP = {"step_id": "s2", "description": "State the result of s1", "agent": "llm"}
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
