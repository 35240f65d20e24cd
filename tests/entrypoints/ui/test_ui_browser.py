"""`aeon ui` in a real browser (headless Chromium from the OS packages, driven by Playwright): what a person sees on
the runs, a run's timeline, an approval, a batch, and a run in progress. The screenshots in docs/ are made here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from durable_harness import AEON, TOOLS, env, runs, wait_for
from ui_harness import HOSTILE, HOSTILE_REQUEST, ROOT, SECRET, Recorded, Server, start

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
DOCS = ROOT / "docs"
SHOTS = os.environ.get("AEON_UI_SCREENSHOTS") == "1"  # read at import: some fixtures clear AEON_* variables

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[dev]')")
if CHROMIUM is None:
    pytest.skip(
        "no Chromium installed: apt-get install chromium chromium-driver (the README's test command runs .ci/chromium, "
        "which does it)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def server(recorded: Recorded) -> Iterator[Server]:
    running = start(recorded.folder, extra_env={"GITHUB_TOKEN": SECRET})
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        profile = tmp_path_factory.mktemp("chromium-profile")
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS, viewport={"width": 1280, "height": 900}
        )
        yield context
        context.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    opened = browser.new_page()
    opened.dialogs = []
    opened.on("dialog", lambda d: (opened.dialogs.append(d.message), d.dismiss()))
    opened.set_default_timeout(20_000)
    yield opened
    opened.close()


def _shot(page: Any, name: str) -> None:
    """The page as the README shows it, written to docs/ when AEON_UI_SCREENSHOTS=1 (a test run leaves the
    checkout as it found it otherwise)."""
    if SHOTS:
        page.screenshot(path=str(DOCS / name), full_page=True)


def test_the_runs_page_lists_the_runs_awaiting_approval_first_then_every_run_newest_first(
    recorded: Recorded, server: Server, page: Any
) -> None:
    page.goto(server.url + "/")

    awaiting = page.locator("#awaiting")
    assert awaiting.is_visible()
    assert "Awaiting approval (3)" in awaiting.inner_text()
    assert "publish" in awaiting.inner_text() and "Release 1.2 notes" in awaiting.inner_text()
    assert page.locator("section, h1").first.get_attribute("id") == "awaiting"  # before the table
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 10
    assert rows.first.locator("td.id").inner_text().startswith("batch-")  # the batch ran last
    statuses = page.locator("table.runs .status").all_inner_texts()
    assert statuses.count("completed") == 6 and statuses.count("awaiting approval") == 3
    expired = page.locator("tr", has_text="ttl expired")
    assert "cap ttl" in expired.inner_text()
    _shot(page, "ui-runs.png")


def test_runs_filter_by_status_and_by_text(server: Server, page: Any) -> None:
    page.goto(server.url + "/")
    page.select_option("select[name=status]", "ttl_expired")
    page.click("button:text('Filter')")

    assert page.locator("table.runs tbody tr").count() == 1
    assert "1 run ttl expired" in page.inner_text("p.count")

    page.goto(server.url + "/")
    page.fill("input[name=q]", "once more")
    page.click("button:text('Filter')")

    assert page.locator("table.runs tbody tr").count() == 1
    assert "calculate the sum of 5 and 10, once more" in page.inner_text("table.runs")


def test_why_a_run_stopped_is_two_clicks_from_the_runs_page(recorded: Recorded, server: Server, page: Any) -> None:
    page.goto(server.url + "/")
    page.locator("tr", has_text="ttl expired").locator("td.id a").click()  # one
    ending = page.locator("#ending")

    assert "stopped by cap ttl" in ending.inner_text()
    page.locator("#ending a.src").first.click()  # two: the record it came from

    assert page.locator("h1").inner_text().startswith("ttl_expired")
    assert '"cap": "ttl"' in page.inner_text("#record")


def test_a_two_pass_run_shows_passes_phases_steps_calls_scores_and_how_the_plan_changed(
    recorded: Recorded, server: Server, page: Any
) -> None:
    page.goto(f"{server.url}/runs/{recorded.ids['two_pass']}")

    timeline = page.locator("#timeline")
    assert timeline.locator(".pass h3").all_inner_texts()[0].startswith("Pass 1")
    assert timeline.locator(".pass").count() == 2
    letters = [t.strip() for t in timeline.locator(".letter").all_inner_texts()]
    assert letters == ["A", "B", "C", "D", "B", "C", "D"]
    steps = timeline.locator(".i-step")
    assert "step s1 · complete · tool calculator" in steps.nth(0).inner_text()
    assert "step s2 · complete · LLM" in steps.nth(1).inner_text()
    assert timeline.locator(".i-step svg.bar rect").count() >= 4  # durations drawn to the run's scale
    calls = page.locator("#llm-calls tbody tr")
    assert [calls.nth(i).locator("td").nth(1).inner_text() for i in range(calls.count())] == [
        "profile_and_plan", "evaluate", "refine", "reason:s2", "evaluate"
    ]  # fmt: skip
    scores = page.locator("#scores")
    assert scores.locator("svg.chart polyline").count() == 2 and scores.locator("svg.chart line").count() == 3
    assert "0.4" in scores.locator("tbody tr").nth(0).inner_text()
    assert "threshold" in scores.inner_text() and "0.8" in scores.inner_text()
    change = page.locator("#plan-changes")
    assert "ADD s2 — applied: the answer must be stated" in change.inner_text()
    assert change.locator(".d-added").inner_text().startswith("+ s2 State the sum from s1")
    _shot(page, "ui-run.png")

    page.locator("#llm-calls tbody tr").nth(1).locator("a.src").click()
    assert page.locator("h1").inner_text().startswith("llm_call")
    assert '"purpose": "evaluate"' in page.inner_text("#record")


def test_tool_output_and_requests_show_markup_and_script_links_as_text_and_no_secret(
    recorded: Recorded, server: Server, page: Any
) -> None:
    for path in ("/", f"/runs/{recorded.ids['hostile']}"):
        page.goto(server.url + path)
        assert page.title() != "pwned"
        assert page.locator("a[href^='javascript:'], img[src=x], script:not([src])").count() == 0
        assert SECRET not in page.content()
    assert page.locator("h1.request").inner_text() == HOSTILE_REQUEST
    shown = page.locator(".i-tool").inner_text()
    assert HOSTILE in shown
    assert "[REDACTED]" in shown
    assert page.dialogs == []


def test_approving_with_edited_arguments_checks_them_first_and_the_page_follows_the_run_to_its_end(
    recorded: Recorded, server: Server, page: Any
) -> None:
    run_id = recorded.awaiting[0]
    page.goto(server.url + "/")
    page.locator("#awaiting li", has_text=run_id[:8]).locator("a.decide").click()
    approval = page.locator("#approval")
    assert "calls tool publish with" in approval.inner_text()
    assert json.loads(page.inner_text("#asked")) == {"title": "Release 1.2 notes", "channel": "news"}
    _shot(page, "ui-approval.png")

    page.fill("#args", '{"title": 12, "channel": "blog"}')
    page.click("#approve-edited")
    assert "invalid at title: expected string, got integer 12" in page.locator("#problems li").inner_text()
    assert next(r for r in runs(recorded.folder) if r["id"] == run_id)["status"] == "awaiting_approval"

    page.fill("#args", '{"title": "Release 1.2 notes", "channel": "blog"}')
    page.fill(".edit input[name=by]", "ana")
    page.click("#approve-edited")

    page.locator("#ending .s-completed").wait_for(timeout=60_000)
    assert "Decision sent (approve)" in page.inner_text("#decided")
    timeline = page.locator("#timeline").inner_text()
    assert "approval decided: approve with edited arguments by ana" in timeline
    assert "tool publish for s2 returned" in timeline
    assert (recorded.folder / "published.txt").read_text() == "blog: Release 1.2 notes\n"


def test_denying_with_a_reason_ends_the_step_as_denied(recorded: Recorded, server: Server, page: Any) -> None:
    run_id = recorded.awaiting[1]
    page.goto(f"{server.url}/runs/{run_id}")
    page.fill("#reason", "not before the release")
    page.click("#deny")

    page.locator("#ending .status:not(.s-awaiting_approval):not(.s-pending)").wait_for(timeout=60_000)
    denied = page.locator(".k-denied")
    denied.wait_for(timeout=20_000)
    assert "denied" in denied.inner_text()
    assert "not before the release" in page.locator("#timeline").inner_text()


def test_a_batch_shows_its_progress_and_its_runs(recorded: Recorded, server: Server, page: Any) -> None:
    page.goto(server.url + "/batches")
    page.locator("table.batches a", has_text=recorded.batch).click()

    assert "3/3 done · 0 running · 0 queued · 0 failed" in page.inner_text("#progress")
    assert page.locator("table.runs tbody tr").count() == 3
    _shot(page, "ui-batch.png")


def test_a_run_in_progress_updates_on_the_open_page_without_reloading(
    recorded: Recorded, server: Server, page: Any, tmp_path: Path
) -> None:
    folder = recorded.folder
    (folder / "durable_test_tools.py").write_text(TOOLS)
    wait = {"step_id": "s1", "description": "Wait for the release", "tool": "wait_for_release", "args": {"text": "go"}}
    say = {"step_id": "s2", "description": "Say it", "tool": "echo", "args": {"text": "released"}}
    plan = {"goal": "wait, then say so", "steps": [wait, say]}
    (folder / "slow-plan.json").write_text(json.dumps(plan))
    doc = {
        "llm": {"adapter": "scripted", "script": str(folder / "empty-script.yaml")},
        "run": {"evaluate": False},
        "tools": {"modules": ["durable_test_tools"]},
    }
    (folder / "slow.yaml").write_text(yaml.safe_dump(doc))
    effects = env(folder)["AEON_TEST_EFFECTS"]
    for leftover in (".started", ".release"):
        Path(effects + leftover).unlink(missing_ok=True)
    args = ["run", "wait for it", "--plan", "slow-plan.json", "--ttl", "1", "--config", "slow.yaml", "-q"]
    running = subprocess.Popen([*AEON, *args], cwd=folder, env=env(folder), stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: os.path.exists(effects + ".started"), what="the slow tool to start")
        run_id = next(r["id"] for r in runs(folder) if r["request"] == "wait for it")
        page.goto(f"{server.url}/runs/{run_id}")
        assert "running" in page.inner_text("#ending")
        assert "under way" in page.inner_text("#timeline")
        page.evaluate("window.notReloaded = true")

        Path(effects + ".release").touch()
        page.locator("#ending .s-completed").wait_for(timeout=60_000)
    finally:
        Path(effects + ".release").touch()
        running.wait(timeout=60)

    assert page.evaluate("window.notReloaded") is True
    assert "tool echo for s2 returned" in page.inner_text("#timeline")
