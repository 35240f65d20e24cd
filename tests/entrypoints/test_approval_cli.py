"""Human approval from the command line: `aeon run` asks on a terminal; with no terminal the run waits durably
on the record (exit 6, status awaiting_approval) and `aeon approve` / `aeon deny` — from any other process — let it
go on exactly where it stopped, with no LLM call made twice. Real processes, a real pseudo-terminal, SQLite DBOS."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml
from durable_harness import AEON, aeon, env, records, runs, wait_for
from fake_provider import FakeProvider, serving

from multipass import profile, verdict

TOOLS = '''
import os

from aeon.adapters.tools.decorator import tool


@tool(example={"text": "a"})
def record(text: str) -> str:
    """Append text to the effects file and return it."""
    with open(os.environ["AEON_TEST_EFFECTS"], "a") as f:
        f.write(text + "\\n")
    return text


@tool(example={"text": "a"}, requires_approval=True)
def publish(text: str) -> str:
    """Publish text (appended to the effects file); a person approves each call first."""
    with open(os.environ["AEON_TEST_EFFECTS"], "a") as f:
        f.write("published " + text + "\\n")
    return "published " + text
'''
PLAN = {
    "goal": "record, then publish",
    "steps": [
        {"step_id": "s1", "description": "Record the draft", "tool": "record", "args": {"text": "draft"}},
        {"step_id": "s2", "description": "Publish it", "tool": "publish", "args": {"text": "news"}},
    ],
}


def _setup(tmp_path: Path, answers: int = 1) -> list[str]:
    """A config whose scripted model answers the evaluation of a run of PLAN (given with --plan and --ttl 1)."""
    (tmp_path / "approval_test_tools.py").write_text(TOOLS)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"responses": [verdict(True)] * answers}))
    doc: dict[str, Any] = {
        "llm": {"adapter": "scripted", "script": str(tmp_path / "script.yaml")},
        "run": {"ttl": 1, "max_llm_calls": 10},
        "tools": {"modules": ["approval_test_tools"]},
        "log": {"path": str(tmp_path / "runs.jsonl")},
    }
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(doc))
    return ["--config", str(tmp_path / "cfg.yaml")]


def _run(tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """`aeon run` with no terminal (stdin is /dev/null, --json): it stops at the publish call, waiting."""
    cfg = _setup(tmp_path)
    done = aeon(tmp_path, "run", "record, then publish", "--plan", "plan.json", "--ttl", "1", *cfg, "--json")
    assert done.returncode == 6, done.stderr
    doc = json.loads(done.stdout)
    return doc["correlation_id"], doc


def _effects(tmp_path: Path) -> str:
    path = tmp_path / "effects.txt"
    return path.read_text() if path.is_file() else ""


def _llm_calls(tmp_path: Path, run_id: str) -> int:
    return sum(1 for r in records(tmp_path / "runs.jsonl", run_id) if r["event"] == "llm_call")


def test_with_no_terminal_the_run_waits_on_the_record_and_another_process_approves_it(tmp_path: Path) -> None:
    run_id, doc = _run(tmp_path)
    assert doc["status"] == "awaiting_approval"
    pending = doc["pending_approval"]
    assert (pending["step_id"], pending["tool"], pending["args"]) == ("s2", "publish", {"text": "news"})
    assert _effects(tmp_path) == "draft\n"  # s1 ran; the publish call was not made
    assert [r["status"] for r in runs(tmp_path) if r["id"] == run_id] == ["awaiting_approval"]

    sent = aeon(tmp_path, "approve", run_id, "--send-only", "--by", "ana", "--config", "cfg.yaml")  # a 2nd process
    assert sent.returncode == 0, sent.stderr
    assert _effects(tmp_path) == "draft\n"  # only recorded: nothing ran yet

    done = aeon(tmp_path, "resume", run_id, "--config", "cfg.yaml", "--json")  # a third one finishes it
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "completed" and result["correlation_id"] == run_id
    assert _effects(tmp_path) == "draft\npublished news\n"  # s1 not run again, publish once
    assert [s["status"] for s in result["plan"]["steps"]] == ["complete", "complete"]
    log = records(tmp_path / "runs.jsonl", run_id)
    assert [r["seq"] for r in log] == list(range(len(log)))
    decided = [r for r in log if r["event"] == "approval_decided"]
    assert [(d["verdict"], d["by"]) for d in decided] == [("approve", "ana")]
    assert _llm_calls(tmp_path, run_id) == 1  # the evaluation, once: nothing asked twice


def test_a_denied_call_is_never_made_and_the_run_goes_on_knowing_why(tmp_path: Path) -> None:
    run_id, _ = _run(tmp_path)
    done = aeon(
        tmp_path, "deny", run_id, "--reason", "not before Monday", "--by", "ana", "--config", "cfg.yaml", "--json"
    )
    assert done.returncode == 7, done.stderr  # denied, not expired
    result = json.loads(done.stdout)
    s1, s2 = result["plan"]["steps"]
    assert s1["status"] == "complete" and s2["status"] == "failed" and s2["mode"] == "denied"
    assert "denied by ana: not before Monday" in s2["errors"]
    assert _effects(tmp_path) == "draft\n"
    decided = [r for r in records(tmp_path / "runs.jsonl", run_id) if r["event"] == "approval_decided"]
    assert decided[0]["verdict"] == "deny" and decided[0]["reason"] == "not before Monday"


def test_edited_arguments_that_do_not_fit_are_refused_before_anything_is_sent(tmp_path: Path) -> None:
    run_id, _ = _run(tmp_path)
    bad = aeon(tmp_path, "approve", run_id, "--args", '{"text": 5}', "--config", "cfg.yaml")
    assert bad.returncode == 2
    assert "--args do not fit tool 'publish'" in bad.stderr and "nothing was sent" in bad.stderr
    assert [r["status"] for r in runs(tmp_path) if r["id"] == run_id] == ["awaiting_approval"]
    done = aeon(tmp_path, "approve", run_id, "--args", '{"text": "edited news"}', "--config", "cfg.yaml", "--json")
    assert done.returncode == 0, done.stderr
    assert _effects(tmp_path) == "draft\npublished edited news\n"
    decided = next(r for r in records(tmp_path / "runs.jsonl", run_id) if r["event"] == "approval_decided")
    assert decided["edited"] is True and decided["args_before"] == {"text": "news"}


def test_approve_refuses_a_run_that_waits_on_nothing(tmp_path: Path) -> None:
    run_id, _ = _run(tmp_path)
    assert aeon(tmp_path, "approve", run_id, "--config", "cfg.yaml").returncode == 0
    again = aeon(tmp_path, "approve", run_id, "--config", "cfg.yaml")
    assert again.returncode == 2 and "was already approved by" in again.stderr
    unknown = aeon(tmp_path, "deny", "no-such-run", "--reason", "x", "--config", "cfg.yaml")
    assert unknown.returncode == 2 and "unknown run id" in unknown.stderr


# -- on a terminal -------------------------------------------------------------------------------------------------
def _in_terminal(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], int]:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*AEON, *args], cwd=tmp_path, env=env(tmp_path), stdin=slave, stdout=subprocess.PIPE, stderr=slave, text=True
    )
    os.close(slave)
    return proc, master


class Screen:
    """What the process showed on its terminal; `expect` waits for text after what was expected before."""

    def __init__(self, master: int) -> None:
        self.master, self.text, self._at = master, "", 0

    def expect(self, wanted: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while (found := self.text.find(wanted, self._at)) < 0:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {wanted!r} on the terminal; it showed: {self.text[-2000:]}")
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.text += os.read(self.master, 4096).decode("utf-8", "replace")
                except OSError:  # the process closed the terminal
                    break
        shown, self._at = self.text[self._at : found + len(wanted)], found + len(wanted)
        return shown


def test_on_a_terminal_the_run_asks_inline_and_an_edit_is_checked_before_it_is_taken(tmp_path: Path) -> None:
    cfg = _setup(tmp_path)
    proc, master = _in_terminal(tmp_path, "run", "record, then publish", "--plan", "plan.json", "--ttl", "1", *cfg)
    screen = Screen(master)
    try:
        shown = screen.expect("approve [a]")
        assert "step s2: Publish it" in shown and "tool publish" in shown and '"text": "news"' in shown
        os.write(master, b"e\n")
        screen.expect("arguments as one JSON object")
        os.write(master, b'{"text": 7}\n')
        screen.expect("do not fit tool publish")
        screen.expect("approve [a]")
        os.write(master, b"a\n")
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
        os.close(master)
    assert proc.returncode == 0, screen.text[-2000:]
    assert _effects(tmp_path) == "draft\npublished news\n"
    assert "published news" in out


def test_a_run_killed_while_its_person_decides_is_approved_later_from_another_process(tmp_path: Path) -> None:
    cfg = _setup(tmp_path)
    args = ("run", "record, then publish", "--plan", "plan.json", "--ttl", "1", *cfg, "--durable")
    proc, master = _in_terminal(tmp_path, *args)
    try:
        shown = Screen(master).expect("approve [a]")
        proc.send_signal(signal.SIGKILL)  # a crash while the question is on the screen
        proc.wait(30)
    finally:
        proc.kill()
        os.close(master)
    run_id = shown.split("durable run ", 1)[1].split()[0]
    assert _effects(tmp_path) == "draft\n"
    wait_for(
        lambda: any(r["id"] == run_id and r["status"] == "awaiting_approval" for r in runs(tmp_path)),
        what="the run listed as awaiting approval",
    )
    done = aeon(tmp_path, "approve", run_id, "--config", "cfg.yaml", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    assert _effects(tmp_path) == "draft\npublished news\n"  # s1 taken from the record, publish made once
    assert _llm_calls(tmp_path, run_id) == 1


class _ByRequest(FakeProvider):
    """An OpenAI-compatible model that plans a publish step only for requests that say "publish"."""

    def answer_for(self, body: bytes) -> str:
        super().answer_for(body)
        schema = (json.loads(body).get("response_format") or {}).get("json_schema") or {}
        kind = schema.get("name", "")
        if kind == "profile_and_plan":
            wanted = "please publish" in body.decode()
            steps = PLAN["steps"] if wanted else PLAN["steps"][:1]
            plan = {"goal": "record (and publish)", "steps": steps}
            return json.dumps({"profile": json.loads(profile(1, 1.0, "narrow", "low")), "plan": plan})
        return {"task_profile": profile(1, 1.0, "narrow", "low"), "evaluation": verdict(True)}.get(kind, "ok")


def test_a_batch_where_some_runs_wait_for_approval_and_the_rest_finish(tmp_path: Path) -> None:
    cfg = _setup(tmp_path)
    lines = ["record a draft", "please publish the news", "record another draft"]
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps({"request": line}) + "\n" for line in lines))
    out = tmp_path / "results.jsonl"
    with serving(_ByRequest()) as provider:
        doc = yaml.safe_load((tmp_path / "cfg.yaml").read_text())
        doc["llm"] = {"adapter": "openai", "base_url": provider.url, "model": "fake"}
        (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(doc))
        done = aeon(tmp_path, "batch", requests, *cfg, "--concurrency", "3", "--out", out)
        assert done.returncode == 6, done.stderr
        assert "1 awaiting approval" in done.stderr
        results = [json.loads(line) for line in out.read_text().splitlines()]
        assert [r["status"] for r in results] == ["completed", "awaiting_approval", "completed"]
        waiting = results[1]
        assert waiting["pending_approval"]["tool"] == "publish"
        assert _effects(tmp_path).count("draft") == 3 and "published" not in _effects(tmp_path)
        approved = aeon(tmp_path, "approve", waiting["run_id"], *cfg, "--json")
        assert approved.returncode == 0, approved.stderr
        assert json.loads(approved.stdout)["status"] == "completed"
    assert _effects(tmp_path).count("published news") == 1


def test_what_a_run_deferred_is_written_before_it_waits_for_a_decision(tmp_path: Path) -> None:
    """The reasoning step's answer came at once, so it waited for the next written step; a run that leaves to wait
    for a person writes it first: the record shows the pass and the answer while it waits, and the resumed run does
    not need the model for it."""
    cfg = _setup(tmp_path)
    plan = {"goal": "draft, then publish", "steps": [{"step_id": "s1", "description": "Draft it", "agent": "llm"}]}
    plan["steps"].append(PLAN["steps"][1])
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"responses": ["Drafted.", verdict(True)]}))
    done = aeon(tmp_path, "run", "draft, then publish", "--plan", "plan.json", "--ttl", "1", *cfg, "--json")
    assert done.returncode == 6, done.stderr
    run_id = json.loads(done.stdout)["correlation_id"]
    [listed] = [r for r in runs(tmp_path) if r["id"] == run_id]
    assert (listed["status"], listed["passes"], listed["calls"]) == ("awaiting_approval", 1, 1)

    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"responses": ["another draft", verdict(True)]}))
    approved = aeon(tmp_path, "approve", run_id, "--config", "cfg.yaml", "--json")
    assert approved.returncode == 0, approved.stderr
    result = json.loads(approved.stdout)
    assert result["status"] == "completed" and result["outputs"]["s1"]["output"] == "Drafted."  # not asked again
