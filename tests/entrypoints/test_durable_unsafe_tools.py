"""A non-idempotent tool call cut off by a crash is not run again blindly: resume stops with a structured error
naming it; `--rerun-unsafe` runs it again and finishes the run. Idempotency is declared on the tool."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from durable_harness import aeon, records, runs, scripted, start, wait_for

from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.decorator import tool
from aeon.adapters.tools.registry import ToolRegistry

from cli_harness import assert_exit, invoke, one_line
from multipass import first, profile

PLAN = {
    "goal": "record slowly",
    "steps": [
        {"step_id": "s1", "description": "Record one", "tool": "record", "args": {"text": "one"}},
        {"step_id": "s2", "description": "Record two, slowly", "tool": "record_slowly", "args": {"text": "two"}},
    ],
}
ANSWERS = [
    first(profile(1, 1.0, "narrow", "low"), json.dumps(PLAN)),
    json.dumps({"issues": []}),
    json.dumps(
        {"completeness_score": 1.0, "coherence_score": 1.0, "consistent": True, "explanation": "ok", "issues": []}
    ),
]


def test_tools_are_not_idempotent_unless_they_say_so() -> None:
    @tool
    def plain(x: int) -> int:
        """Return x."""
        return x

    @tool(idempotent=True)
    def safe(x: int) -> int:
        """Return x."""
        return x

    registry = ToolRegistry()
    register_builtins(registry)
    registry.register_function(plain)
    registry.register_function(safe)
    assert not registry.is_idempotent("plain")
    assert registry.is_idempotent("safe")
    assert registry.is_idempotent("calculator") and registry.is_idempotent("echo")
    assert not registry.is_idempotent("no such tool")


def test_unsafe_tool_in_flight_stops_resume_until_rerun_unsafe(tmp_path: Path) -> None:
    run_id = _cut_off_in_record_slowly(tmp_path)
    effects = tmp_path / "effects.txt"

    stopped = aeon(tmp_path, "resume", run_id, "--json")
    assert stopped.returncode == 4, stopped.stderr
    error = json.loads(stopped.stdout)["error"]
    assert error["code"] == "AEON.DURABLE.UNSAFE_TOOL_IN_FLIGHT"
    assert "'record_slowly'" in error["message"] and "--rerun-unsafe" in error["message"]
    assert effects.read_text() == "one\ntwo\n"  # nothing ran again

    (tmp_path / "effects.txt.release").touch()
    done = aeon(tmp_path, "resume", run_id, "--rerun-unsafe", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "completed"
    assert doc["correlation_id"] == run_id  # the same run goes on (as the DBOS fork RUN_ID.rerun-unsafe)
    assert effects.read_text() == "one\ntwo\ntwo\n"  # record ran once; only the cut-off call ran again
    again = aeon(tmp_path, "resume", run_id, "--json")  # the run id still leads to the run, now finished
    assert again.returncode == 0 and json.loads(again.stdout)["answer"] == doc["answer"]
    assert effects.read_text() == "one\ntwo\ntwo\n"
    log = records(tmp_path / "runs.jsonl", run_id)
    assert [r["seq"] for r in log] == list(range(len(log)))
    assert [r["event"] for r in log].count("run_start") == 1
    assert [r["event"] for r in log].count("run_end") == 1


def test_a_restarted_batch_stops_runs_cut_off_in_an_unsafe_tool(tmp_path: Path) -> None:
    """The check inside the run itself (DBOS recovery at restart, not `aeon resume`): each run cut off in
    `record_slowly` ends as stopped, naming it, and the batch exits 4; --rerun-unsafe then finishes one."""
    cfg = scripted(tmp_path, "unsafe.yaml", ANSWERS)
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps({"request": f"record slowly #{i}"}) + "\n" for i in range(2)))
    effects = tmp_path / "effects.txt"
    args = ("batch", requests, "--config", cfg, "--concurrency", "2", "--out", tmp_path / "out.jsonl")
    proc = start(tmp_path, *args)
    try:
        wait_for(lambda: effects.is_file() and effects.read_text().count("two") == 2, what="both slow tools")
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        proc.kill()
    (tmp_path / "effects.txt.release").touch()
    again = aeon(tmp_path, *args)
    assert again.returncode == 4, again.stderr
    results = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["status"] for r in results] == ["stopped", "stopped"]
    assert all(r["error"]["code"] == "AEON.DURABLE.UNSAFE_TOOL_IN_FLIGHT" for r in results)
    assert all(r["error"]["tool"] == "record_slowly" for r in results)
    assert effects.read_text().count("two") == 2  # not run again
    done = aeon(tmp_path, "resume", results[0]["run_id"], "--rerun-unsafe", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    assert effects.read_text().count("two") == 3


def _cut_off_in_record_slowly(tmp_path: Path) -> str:
    cfg = scripted(tmp_path, "unsafe.yaml", ANSWERS)
    effects = tmp_path / "effects.txt"
    proc = start(tmp_path, "run", "record slowly", "--config", cfg, "--durable")
    try:
        wait_for(lambda: effects.is_file() and effects.read_text() == "one\ntwo\n", what="the slow tool")
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        proc.kill()
    [listed] = runs(tmp_path)
    return str(listed["id"])


def test_a_cut_off_call_that_did_happen_is_marked_done_with_the_operators_output(tmp_path: Path) -> None:
    run_id = _cut_off_in_record_slowly(tmp_path)
    effects = tmp_path / "effects.txt"
    stopped = aeon(tmp_path, "resume", run_id, "--json")
    assert stopped.returncode == 4, stopped.stderr
    assert f"aeon resume {run_id} --mark-done --output" in json.loads(stopped.stdout)["error"]["message"]

    history = tmp_path / "history.json"
    done = aeon(tmp_path, "resume", run_id, "--mark-done", "--output", '"two"', "--json", "--history", history)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "completed" and doc["correlation_id"] == run_id
    assert effects.read_text() == "one\ntwo\n"  # the tool was never run again
    [step] = [s for s in doc["plan"]["steps"] if s["step_id"] == "s2"]
    assert step["status"] == "complete" and step["step_output"] == "two" and step["mode"] == "operator"
    log = records(tmp_path / "runs.jsonl", run_id)
    calls = [r for r in log if r["event"] == "tool_call"]
    assert [(c["tool"], c["supplied_by"]) for c in calls] == [("record", None), ("record_slowly", "operator")]
    assert [r["seq"] for r in log] == list(range(len(log)))
    assert [r["event"] for r in log].count("run_end") == 1
    [recorded] = [p["execution_results"]["s2"] for p in json.loads(history.read_text())["passes"]]
    assert recorded["mode"] == "operator" and recorded["output"] == "two"
    assert recorded["notes"] == ["output supplied by the operator: the tool was not run for it"]

    again = aeon(tmp_path, "resume", run_id, "--json")  # the run id leads to the finished run
    assert again.returncode == 0 and json.loads(again.stdout)["answer"] == doc["answer"]
    assert effects.read_text() == "one\ntwo\n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--output", "1"], "--output and --output-file go with --mark-done"),
        (["--mark-done"], "--mark-done needs the tool's output"),
        (["--mark-done", "--output", "done"], "--output is not JSON"),
        (["--mark-done", "--output-file", "BAD"], "BAD is not JSON"),
        (["--mark-done", "--output-file", "MISSING"], "cannot read MISSING"),
        (["--mark-done", "--output", "1", "--rerun-unsafe"], "give one"),
    ],
)
def test_mark_done_needs_one_json_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], says: str
) -> None:
    monkeypatch.chdir(tmp_path)  # checked before the system database is opened: nothing is written here
    (tmp_path / "BAD").write_text("{not json")
    done = invoke("resume", "some-run", *args)
    assert_exit(done, 2)
    assert says in one_line(done.stderr)
    assert not (tmp_path / ".aeon").exists()
