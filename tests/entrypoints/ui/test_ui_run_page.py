"""What `aeon ui` says of a whole run: the duration of a run that waited for a decision counts from its start to its
end (not its last execution), and a run's page says how it ended once."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from durable_harness import aeon
from ui_harness import CONFIG, Recorded, Server, start


@pytest.fixture(scope="module")
def approved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Server]]:
    folder: Path = tmp_path_factory.mktemp("ui-approved")
    asked = aeon(folder, "run", "publish the release notes", "--config", CONFIG / "scripted-approval.yaml", "--json")
    assert asked.returncode == 6, asked.stderr
    run_id = re.search(r"durable run (\S+) ", asked.stderr).group(1)  # type: ignore[union-attr]
    done = aeon(folder, "approve", run_id)
    assert done.returncode == 0, done.stderr
    running = start(folder)
    yield run_id, running
    running.stop()


def _seconds(text: str) -> float:
    number, unit = text.split()
    return float(number) / 1000 if unit == "ms" else float(number) * (60 if unit == "min" else 1)


def test_an_approved_run_lasts_from_its_start_to_its_end_not_its_last_execution(
    approved: tuple[str, Server],
) -> None:
    run_id, server = approved
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
