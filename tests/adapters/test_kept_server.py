"""The local server kept warm between runs (llm.keep_alive): the next run finds it, only the key it holds opens it,
it stops once idle and never while a call is processing, and a server gone meanwhile is replaced."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_llama_server import fake_binary, is_gone, records, starts

from aeon.adapters.llm import _keeper, _kept_server
from aeon.adapters.llm.local import LocalLlamaLLM
from aeon.application.errors import LLMUnavailable
from aeon.domain.llm import Message
from aeon.testing import ListLog

MESSAGES = [Message(role="system", content="shared prefix"), Message(role="user", content="add 5 and 10")]


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "servers"
    yield folder
    for pid in _kept_server.stop_all(folder):  # never leave a keeper behind
        assert is_gone(pid, wait=10.0)


def kept(tmp_path: Path, servers: Path, log: ListLog | None = None, mode: str = "ok", **kw: Any) -> LocalLlamaLLM:
    """A local adapter keeping its server warm; the fake binary is written once (a rewritten binary is a new build,
    and so a server of its own)."""
    return LocalLlamaLLM(
        model_path=tmp_path / "model.gguf",
        binary=binary if (binary := tmp_path / f"fake-llama-server-{mode}").exists() else fake_binary(tmp_path, mode),
        keep_alive=kw.pop("keep_alive", 60.0),
        servers_dir=servers,
        slot_cache_dir=tmp_path / "slots",
        logger=log,
        **kw,
    )


def one_call(llm: LocalLlamaLLM) -> int | None:
    async def go() -> int | None:
        await llm.complete(MESSAGES)
        pid = llm.server_pid
        await llm.aclose()
        return pid

    return asyncio.run(go())


def started(log: ListLog) -> list[dict[str, Any]]:
    return [fields for event, fields in log.events if event == "local_server_started"]


def test_the_next_run_finds_the_kept_server_and_only_its_key_opens_it(tmp_path: Path, servers: Path) -> None:
    first_log, second_log = ListLog(), ListLog()
    first = one_call(kept(tmp_path, servers, first_log))
    assert first is not None and not is_gone(first, wait=0.2)  # closing the adapter left it running
    second = one_call(kept(tmp_path, servers, second_log))
    assert second == first
    assert len(starts(tmp_path)) == 1  # one server for both runs
    assert [(s["reused"], s["keep_alive"]) for s in started(first_log) + started(second_log)] == [
        (False, 60.0),
        (True, 60.0),
    ]
    assert "local_server_stopped" not in {event for event, _ in first_log.events + second_log.events}
    key_file = next(servers.glob("*.key"))
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text().strip()
    calls = [r for r in records(tmp_path) if r.get("path") == "/v1/chat/completions"]
    assert len(calls) == 3 and {c["auth"] for c in calls} == {f"Bearer {key}"}  # slot priming, then both runs
    assert "--api-key-file" in starts(tmp_path)[0]["argv"] and key not in " ".join(starts(tmp_path)[0]["argv"])
    assert _kept_server.stop_all(servers) == [json.loads(next(servers.glob("*.json")).read_text())["keeper"]]
    assert is_gone(first, wait=10.0)


def test_a_kept_server_stops_once_idle(tmp_path: Path, servers: Path) -> None:
    pid = one_call(kept(tmp_path, servers, keep_alive=0.3))
    assert pid is not None
    assert is_gone(pid, wait=15.0)  # the keeper checks every keep_alive / 4 seconds
    assert not list(servers.glob("*.json"))


def test_a_server_gone_between_calls_is_replaced_within_the_run(tmp_path: Path, servers: Path) -> None:
    llm = kept(tmp_path, servers)

    async def go() -> tuple[int | None, int | None]:
        await llm.complete(MESSAGES)
        before = llm.server_pid
        for pid in _kept_server.stop_all(servers):  # as if it had stopped idle during a long tool call
            assert is_gone(pid, wait=10.0)
        await llm.complete(MESSAGES)
        after = llm.server_pid
        await llm.aclose()
        return before, after

    before, after = asyncio.run(go())
    assert before is not None and after is not None and before != after
    assert len(starts(tmp_path)) == 2


def test_a_kept_server_that_fails_to_start_is_reported_with_its_log_tail(tmp_path: Path, servers: Path) -> None:
    with pytest.raises(LLMUnavailable) as caught:
        one_call(kept(tmp_path, servers, mode="crash"))
    assert str(caught.value).startswith("llama-server exited with code 3 before it was ready: ")
    assert "error: failed to load model 'broken.gguf'" in str(caught.value)
    assert not list(servers.glob("*.json"))


class Server:
    """What `watch` needs of the server process."""

    def __init__(self) -> None:
        self.code: int | None = None

    def poll(self) -> int | None:
        return self.code


def write_state(state: Path, keeper: int) -> None:
    state.write_text(json.dumps({"keeper": keeper, "server": 1, "port": 2}))


def test_the_keeper_waits_while_a_slot_is_processing_then_stops_the_idle_server(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    write_state(state, os.getpid())
    mtime = state.stat().st_mtime
    answers, slept = iter([True, True, False]), []
    why = _keeper.watch(
        Server(),  # type: ignore[arg-type]
        state,
        8.0,
        busy=lambda: next(answers),
        now=lambda: mtime + 8.0,  # idle for exactly keep_alive seconds
        sleep=slept.append,
    )
    assert why == "idle" and not state.exists()
    assert slept == [2.0, 2.0, 2.0]  # every keep_alive / 4 seconds (at most 5)


def test_the_keeper_keeps_a_server_touched_lately_and_leaves_when_superseded(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    write_state(state, os.getpid())
    mtime, checks = state.stat().st_mtime, []

    def sleep(seconds: float) -> None:
        checks.append(seconds)
        if len(checks) == 3:
            write_state(state, os.getpid() + 1)  # another keeper took this configuration's place

    why = _keeper.watch(Server(), state, 600.0, busy=lambda: False, now=lambda: mtime + 599.0, sleep=sleep)  # type: ignore[arg-type]
    assert why == "superseded" and state.exists()  # the other keeper's file stays
    assert checks == [5.0, 5.0, 5.0]


def test_the_keeper_ends_with_its_server(tmp_path: Path) -> None:
    state, server = tmp_path / "s.json", Server()
    write_state(state, os.getpid())
    server.code = -int(signal.SIGKILL)
    assert _keeper.watch(server, state, 60.0, busy=lambda: False, sleep=lambda s: None) == "exited"  # type: ignore[arg-type]


def test_without_keep_alive_each_run_starts_and_stops_its_own_server(tmp_path: Path, servers: Path) -> None:
    log = ListLog()
    pid = one_call(kept(tmp_path, servers, log, keep_alive=0.0))
    assert pid is not None and is_gone(pid)
    events = [e for e, _ in log.events if e.startswith("local_server")]
    assert events == ["local_server_started", "local_server_stopped"]
    assert not servers.exists()


def test_a_folder_that_cannot_hold_the_kept_server_says_how_to_run_without_it(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file where the folder should be")
    with pytest.raises(LLMUnavailable) as caught:
        one_call(kept(tmp_path, tmp_path / "blocked" / "servers"))
    assert str(caught.value).startswith(f"the local server could not be kept in {tmp_path / 'blocked' / 'servers'} (")
    assert str(caught.value).endswith("set llm.keep_alive: 0 (AEON_LOCAL_KEEP_ALIVE=0) for a server per run")
    assert not starts(tmp_path)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the server dies with its keeper on Linux only")
def test_a_keeper_killed_outright_takes_its_server_along_and_the_next_run_starts_another(
    tmp_path: Path, servers: Path
) -> None:
    first = one_call(kept(tmp_path, servers))
    held = _keeper.read_state(next(servers.glob("*.json")))
    assert held is not None and held["server"] == first
    os.kill(held["keeper"], signal.SIGKILL)  # no chance to stop the server itself
    assert first is not None and is_gone(first, wait=10.0)
    second = one_call(kept(tmp_path, servers))
    assert second not in (None, first) and len(starts(tmp_path)) == 2
