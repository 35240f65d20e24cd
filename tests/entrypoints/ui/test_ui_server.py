"""`aeon ui` as a process, over HTTP: its one-line errors, the token off loopback, the refusal of cross-site and
forged decisions (nothing is sent), the schema check of edited arguments, and the page policy."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from durable_harness import aeon, runs
from ui_harness import Recorded, Server, start

from aeon.adapters.durable.engine import open_client
from aeon.adapters.durable.listing import RunHeads
from aeon.adapters.durable.runtime import RUN_WORKFLOW


@pytest.fixture(scope="module")
def server(recorded: Recorded) -> Iterator[Server]:
    running = start(recorded.folder)
    yield running
    running.stop()


def _csrf(client: httpx.Client, run_id: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get(f"/runs/{run_id}").text)
    assert found is not None
    return found.group(1)


def _status(recorded: Recorded, run_id: str) -> str:
    return next(r["status"] for r in runs(recorded.folder) if r["id"] == run_id)


def test_help_says_what_it_shows_where_it_listens_and_what_it_needs_off_loopback(tmp_path: Path) -> None:
    done = aeon(tmp_path, "ui", "--help")

    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for said in ("--port", "--host", "loopback", "token", "approve", "timeline", "redacted", "aeon[ui]"):
        assert said in text


def test_a_folder_with_no_runs_yet_is_one_line_and_exit_2_and_no_database_is_made(tmp_path: Path) -> None:
    done = aeon(tmp_path, "ui", "--port", "0")

    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "no durable runs recorded here yet" in done.stderr
    assert not (tmp_path / ".aeon").exists()


def test_a_port_in_use_is_one_line_and_exit_2(recorded: Recorded) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = aeon(recorded.folder, "ui", "--port", str(port))

    assert done.returncode == 2
    said = f"aeon: port {port} on 127.0.0.1 is in use (another aeon ui?): choose another with --port N"
    assert done.stderr.strip() == said


def test_the_heads_read_in_one_query_are_the_runs_dbos_lists_newest_first(recorded: Recorded) -> None:
    url = f"sqlite:///{recorded.folder / '.aeon' / 'aeon.sqlite'}"
    client, heads = open_client(url), RunHeads(url, RUN_WORKFLOW)
    try:
        listed = client.list_workflows(name=RUN_WORKFLOW, sort_desc=True, load_input=False, load_output=False)
        read = heads.read()
    finally:
        client.destroy()
        heads.close()

    assert {h.id: h.status for h in read} == {w.workflow_id: w.status for w in listed}
    assert [h.created_at for h in read] == sorted((h.created_at for h in read), reverse=True)


def test_the_runs_page_lists_what_aeon_runs_lists(recorded: Recorded, server: Server) -> None:
    page = httpx.get(server.url + "/").text

    listed = runs(recorded.folder)
    assert len(listed) >= 10
    for row in listed:
        assert f'href="/runs/{row["id"]}"' in page


def test_off_loopback_every_request_needs_the_token_printed_once_and_ctrl_c_stops_it(recorded: Recorded) -> None:
    running = start(recorded.folder, "--host", "0.0.0.0")
    try:
        said = "".join(running.lines)
        token = re.search(r"\?token=(\S+) ", said)
        assert token is not None, said
        base = running.url.replace("0.0.0.0", "127.0.0.1")
        run_id = recorded.awaiting[-1]
        with httpx.Client(base_url=base) as anonymous:
            refused = anonymous.get("/")
            decision = anonymous.post(f"/runs/{run_id}/approve", data={"csrf": "x"})
            feed = anonymous.get(f"/runs/{run_id}/live")
        with httpx.Client(base_url=base) as browser:
            welcome = browser.get(f"/?token={token.group(1)}")
            page = browser.get("/")
        bearer = httpx.get(base + "/batches", headers={"authorization": f"Bearer {token.group(1)}"})
    finally:
        output = running.stop()

    assert refused.status_code == decision.status_code == feed.status_code == 401
    assert "needs its token" in refused.text
    assert welcome.status_code == 303 and welcome.headers["location"] == "/"
    assert "HttpOnly" in welcome.headers["set-cookie"] and "SameSite=Strict" in welcome.headers["set-cookie"]
    assert page.status_code == 200 and "Runs" in page.text
    assert bearer.status_code == 200
    assert output.count(token.group(1)) == 1
    assert output.rstrip().endswith("aeon: ui stopped") and running.process.returncode == 0
    assert _status(recorded, run_id) == "awaiting_approval"


def test_on_loopback_it_answers_only_requests_that_name_its_address(server: Server) -> None:
    rebound = httpx.get(server.url + "/", headers={"host": "attacker.example"})

    assert rebound.status_code == 421


def test_a_decision_without_the_pages_form_field_or_from_another_site_is_refused_and_nothing_is_sent(
    recorded: Recorded, server: Server
) -> None:
    run_id = recorded.awaiting[-1]
    with httpx.Client(base_url=server.url) as client:
        csrf = _csrf(client, run_id)
        forged = client.post(f"/runs/{run_id}/approve", data={"by": "mallory"})
        cross_site = client.post(
            f"/runs/{run_id}/deny", data={"csrf": csrf, "reason": "x"}, headers={"sec-fetch-site": "cross-site"}
        )
        other_origin = client.post(
            f"/runs/{run_id}/approve", data={"csrf": csrf}, headers={"origin": "http://attacker.example"}
        )

    assert forged.status_code == cross_site.status_code == other_origin.status_code == 403
    assert _status(recorded, run_id) == "awaiting_approval"


def test_edited_arguments_that_do_not_fit_the_tool_are_refused_before_anything_is_sent(
    recorded: Recorded, server: Server
) -> None:
    run_id = recorded.awaiting[-1]
    with httpx.Client(base_url=server.url) as client:
        csrf = _csrf(client, run_id)
        bad = json.dumps({"title": 5, "channel": "blog"})
        checked = client.post(f"/runs/{run_id}/check", data={"csrf": csrf, "args": bad}).json()
        refused = client.post(f"/runs/{run_id}/approve", data={"csrf": csrf, "edit": "1", "args": bad})
        not_json = client.post(f"/runs/{run_id}/approve", data={"csrf": csrf, "edit": "1", "args": "{title"})
        no_reason = client.post(f"/runs/{run_id}/deny", data={"csrf": csrf, "reason": "  "})

    assert checked == {"problems": ["args for tool 'publish' invalid at title: expected string, got integer 5"]}
    assert refused.status_code == 400
    assert "the edited arguments do not fit tool &#39;publish&#39;" in refused.text
    assert "nothing was sent" in refused.text
    assert not_json.status_code == 400 and "the edited arguments is not JSON" in not_json.text
    assert no_reason.status_code == 400 and "a denial needs a reason" in no_reason.text
    assert _status(recorded, run_id) == "awaiting_approval"


def test_pages_run_no_inline_script_and_load_nothing_from_elsewhere(recorded: Recorded, server: Server) -> None:
    with httpx.Client(base_url=server.url) as client:
        pages = [client.get(p) for p in ("/", f"/runs/{recorded.ids['two_pass']}", "/batches", "/nowhere")]
        assets = [client.get(p) for p in ("/static/aeon.css", "/static/aeon.js")]

    for page in pages:
        policy = page.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assert page.headers["x-content-type-options"] == "nosniff"
        assert not re.search(r"""(src|href|action)=["']?(https?:)?//""", page.text)
        assert "<script>" not in page.text and " on" + "click=" not in page.text
    assert pages[-1].status_code == 404
    assert all(a.status_code == 200 for a in assets)
