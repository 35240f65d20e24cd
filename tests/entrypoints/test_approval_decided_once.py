"""One decision per approval: a second `aeon approve` / `aeon deny` on the same call says what was decided, by whom
and when, and changes nothing (exit 2); of an approve and a deny sent at once, one wins and the other is told. Bad
--args and an empty --reason are one line and exit 2; a run that stops to wait writes its --history."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from durable_harness import aeon, runs, start
from test_approval_cli import _effects, _run, _setup
from ui_harness import start as start_ui


def test_a_second_answer_says_who_decided_and_when_and_changes_nothing(tmp_path: Path) -> None:
    run_id, _ = _run(tmp_path)
    sent = aeon(tmp_path, "approve", run_id, "--send-only", "--by", "ana", "--config", "cfg.yaml")
    assert sent.returncode == 0, sent.stderr

    second = aeon(tmp_path, "deny", run_id, "--reason", "no", "--by", "bob", "--config", "cfg.yaml", "--json")

    assert second.returncode == 2, second.stderr
    error = json.loads(second.stdout)["error"]
    assert error["code"] == "AEON.APPROVAL.DECIDED"
    assert "already approved by ana at 20" in error["message"] and "nothing was changed" in error["message"]
    done = aeon(tmp_path, "resume", run_id, "--config", "cfg.yaml", "--json")
    assert done.returncode == 0, done.stderr
    assert _effects(tmp_path) == "draft\npublished news\n"  # ana's approval stood
    after = aeon(tmp_path, "approve", run_id, "--by", "carl", "--config", "cfg.yaml")  # the run has finished
    assert after.returncode == 2 and "already approved by ana at" in after.stderr
    assert len(after.stderr.strip().splitlines()) == 1 and "Traceback" not in after.stderr


def test_of_an_approve_and_a_deny_sent_at_once_one_wins_and_the_other_is_told(tmp_path: Path) -> None:
    run_id, _ = _run(tmp_path)
    cfg = ("--config", "cfg.yaml", "--send-only")
    both = [
        start(tmp_path, "approve", run_id, "--by", "ana", *cfg),
        start(tmp_path, "deny", run_id, "--reason", "not now", "--by", "bob", *cfg),
    ]
    ended = [(p.wait(120), p.stderr.read() if p.stderr else "") for p in both]

    codes = sorted(code for code, _ in ended)
    assert codes == [0, 2], ended
    loser = next(err for code, err in ended if code == 2)
    winner = "approved by ana" if ended[0][0] == 0 else "denied by bob"
    assert f"already {winner} at" in loser, loser
    done = aeon(tmp_path, "resume", run_id, "--config", "cfg.yaml", "--json")
    published = _effects(tmp_path) == "draft\npublished news\n"
    assert published == (winner == "approved by ana"), done.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["approve", "RUN", "--args", "not json"], "--args is not JSON"),
        (["approve", "RUN", "--args", '{"text": "a", "text": "b"}'], "--args names 'text' twice"),
        (["approve", "RUN", "--args", "[1, 2]"], "--args must be a JSON object"),
        (["deny", "RUN", "--reason", ""], "a denial needs a reason"),
        (["deny", "RUN", "--reason", "   "], "a denial needs a reason"),
    ],
    ids=["not-json", "duplicate-key", "not-an-object", "empty-reason", "blank-reason"],
)
def test_a_bad_decision_is_one_line_and_exit_2_before_anything_is_sent(
    tmp_path: Path, args: list[str], says: str
) -> None:
    run_id, _ = _run(tmp_path)
    done = aeon(tmp_path, *[run_id if a == "RUN" else a for a in args], "--config", "cfg.yaml")

    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and says in done.stderr, done.stderr
    assert [r["status"] for r in runs(tmp_path) if r["id"] == run_id] == ["awaiting_approval"]


def test_a_run_that_stops_to_wait_for_a_decision_writes_its_history(tmp_path: Path) -> None:
    cfg = _setup(tmp_path)
    done = aeon(
        tmp_path, "run", "record, then publish", "--plan", "plan.json", "--ttl", "1", *cfg, "--json",
        "--history", "waiting.json",
    )  # fmt: skip

    assert done.returncode == 6, done.stderr
    history = json.loads((tmp_path / "waiting.json").read_text())
    assert history["execution_id"] == json.loads(done.stdout)["correlation_id"]
    assert history["final_result"]["result_type"] == "awaiting_approval"
    assert len(history["passes"]) == 1
    under_way = history["passes"][0]  # the pass the run waits in
    assert under_way["pass_number"] == 1
    assert [s["step_id"] for s in under_way["plan_state"]["steps"]] == ["s1", "s2"]


def test_a_run_a_person_denied_ends_denied_saying_which_step_by_whom_and_why(tmp_path: Path) -> None:
    run_id, _ = _run(tmp_path)
    done = aeon(tmp_path, "deny", run_id, "--reason", "not before Monday", "--by", "ana", "--config", "cfg.yaml")

    assert done.returncode == 7, done.stderr  # not 3: nothing expired
    why = "a person denied step s2 (publish), denied by ana: not before Monday"
    assert f"denied: {why}" in done.stdout and "ttl" not in done.stdout.split("denied:", 1)[1].split("·")[0]
    assert done.stderr.strip().endswith(why + "; the run did not get done without it")
    row = next(r for r in runs(tmp_path) if r["id"] == run_id)
    assert row["status"] == "denied" and why in row["why"]
    listed = aeon(tmp_path, "runs", "--config", "cfg.yaml")
    assert f"{run_id}  denied" in listed.stdout and why in listed.stdout


def test_aeon_ui_shows_a_denied_run_as_denied_with_who_and_why(tmp_path: Path) -> None:
    run_id, _ = _run(tmp_path)
    denied = aeon(tmp_path, "deny", run_id, "--reason", "not before Monday", "--by", "ana", "--config", "cfg.yaml")
    assert denied.returncode == 7, denied.stderr
    server = start_ui(tmp_path, "--config", "cfg.yaml")
    try:
        listed = httpx.get(server.url + "/?status=denied").text
        page = httpx.get(f"{server.url}/runs/{run_id}").text
    finally:
        server.stop()
    assert f'href="/runs/{run_id}"' in listed
    headline = page.split('<p class="headline">', 1)[1].split("</p>", 1)[0]
    assert "denied" in headline and "a person denied step s2 (publish), denied by ana: not before Monday" in headline
    assert "stopped by cap" not in headline  # the run's end is no timeout (the log's ttl_expired record stays)
    assert '<strong class="code">AEON.APPROVAL.DENIED</strong>: a person denied step s2' in headline
    assert "run ended: " not in page  # the ending is said once, in the headline; the end records are linked
