"""What `aeon ui` says of a whole run: the duration of a run that waited for a decision counts from its start to its
end (not its last execution), a run's page says how it ended once, an error code stays whole in the runs table, and
an MCP tool's output of several lines keeps its lines."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from durable_harness import aeon
from ui_harness import CONFIG, Recorded, Server, start

from mcp_harness import new_tag, stdio_args


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], Server]]:
    """An approved run, a denied one and a run of an MCP tool, and `aeon ui` over them."""
    where: Path = tmp_path_factory.mktemp("ui-run-page")
    ids = {"approved": _asked(where), "denied": _asked(where), "mcp": _mcp_run(where)}
    assert aeon(where, "approve", ids["approved"]).returncode == 0
    assert aeon(where, "deny", ids["denied"], "--reason", "not today").returncode == 7  # denied
    running = start(where)
    yield ids, running
    running.stop()


def _run_id(stderr: str) -> str:
    found = re.search(r"durable run (\S+) ", stderr)
    assert found is not None, stderr
    return found.group(1)


def _asked(where: Path) -> str:
    asked = aeon(where, "run", "publish the release notes", "--config", CONFIG / "scripted-approval.yaml", "--json")
    assert asked.returncode == 6, asked.stderr
    return _run_id(asked.stderr)


def _mcp_run(where: Path) -> str:
    """A run of one step: the test MCP server's `shout` of a text of three lines."""
    step = {"step_id": "s1", "description": "Shout it", "tool": "t_shout", "args": {"text": "one\ntwo\nthree"}}
    (where / "plan.json").write_text(json.dumps({"goal": "shout", "steps": [step]}))
    (where / "empty.yaml").write_text(yaml.safe_dump({"responses": []}))
    server = {"name": "test", "command": sys.executable, "args": stdio_args(new_tag()), "prefix": "t_"}
    doc = {
        "llm": {"adapter": "scripted", "script": "empty.yaml"},
        "run": {"evaluate": False},
        "tools": {"mcp": [server]},
    }
    (where / "mcp.yaml").write_text(yaml.safe_dump(doc))
    done = aeon(where, "run", "shout it", "--plan", "plan.json", "--config", "mcp.yaml")
    assert done.returncode == 0, done.stderr
    return _run_id(done.stderr)


def _seconds(text: str) -> float:
    number, unit = text.split()
    return float(number) / 1000 if unit == "ms" else float(number) * (60 if unit == "min" else 1)


def test_an_approved_run_lasts_from_its_start_to_its_end_not_its_last_execution(
    folder: tuple[dict[str, str], Server],
) -> None:
    ids, server = folder
    run_id = ids["approved"]
    row = httpx.get(server.url + "/").text.split(f'href="/runs/{run_id}"')[1].split("</tr>")[0]
    took = re.findall(r'<td class="n">([\d.]+ (?:ms|s|min))</td>', row)[-1]
    page = httpx.get(f"{server.url}/runs/{run_id}").text
    said = re.search(r'<span class="k">took</span> ([\d.]+ (?:ms|s|min))', page)

    # it waited for `aeon approve`, a second process, to start and decide: a second at least, where the execution
    # that finished it took milliseconds
    assert _seconds(took) >= 0.5 and said is not None and said.group(1) == took


def test_a_run_page_says_how_it_ended_once(recorded: Recorded) -> None:
    server = start(recorded.folder)
    try:
        page = httpx.get(f"{server.url}/runs/{recorded.ids['ttl_expired']}").text
    finally:
        server.stop()

    ending = page.split('id="ending"')[1].split("</section>")[0]
    assert ending.count("stopped by cap") == 1 and "run ended" not in ending
    assert re.search(r'recorded: <a class="src"[^>]*>#\d+</a> <a class="src"', ending)  # both records are linked


def test_an_error_code_is_one_unbroken_word_in_the_runs_table(folder: tuple[dict[str, str], Server]) -> None:
    ids, server = folder
    row = httpx.get(server.url + "/").text.split(f'href="/runs/{ids["denied"]}"')[1].split("</tr>")[0]
    css = httpx.get(server.url + "/static/aeon.css").text

    assert re.search(r'<div class="why"><code class="code">AEON\.APPROVAL\.DENIED</code>: ', row), row
    assert re.search(r"\.why \.code[^{]*\{[^}]*white-space: nowrap", css)


def test_an_mcp_tools_output_of_several_lines_keeps_its_lines(folder: tuple[dict[str, str], Server]) -> None:
    ids, server = folder
    page = httpx.get(f"{server.url}/runs/{ids['mcp']}").text

    shown = [p for p in re.findall(r"<pre>(.*?)</pre>", page, re.S) if "ONE" in p]
    assert shown and all("ONE\nTWO\nTHREE" in p for p in shown), shown
