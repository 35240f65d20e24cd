"""The local server's saved KV cache of the prompt prefix: restored when there, primed and saved when not, and never
a reason for a run to fail (against an in-process stand-in for llama-server's slot endpoints)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import httpx
import pytest
from fake_llama_slots import MAGIC, FakeSlotServer

from aeon.adapters.llm._llama_server import layout_key
from aeon.adapters.llm._slot_cache import SlotCache, file_name
from aeon.testing import FakeClock, ListLog

PREFIX = "You are Aeon. Tools: calculator, echo. " * 20


def cache(root: Path, log: ListLog, *, layout: str = "layout1", max_bytes: int = 1 << 20) -> SlotCache:
    return SlotCache(
        root,
        layout,
        max_bytes=max_bytes,
        model="gemma-3-270m",
        prime_timeout=5.0,
        logger=log,
        clock=FakeClock(0.25).monotonic,
    )


def warm(slots: SlotCache, server: FakeSlotServer, prefix: str = PREFIX) -> str:
    async def go() -> str:
        async with server.client() as client:
            return await slots.warm(client, prefix)

    return asyncio.run(go())


def ready(tmp_path: Path, log: ListLog, **kwargs: object) -> tuple[SlotCache, FakeSlotServer]:
    slots = cache(tmp_path / "slots", log, **kwargs)  # type: ignore[arg-type]
    folder = slots.prepare()
    assert folder is not None
    return slots, FakeSlotServer(folder)


def test_an_empty_cache_primes_slot_0_with_the_prefix_alone_and_saves_it_whole(tmp_path: Path) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)

    assert warm(slots, server) == "saved"

    assert server.steps() == ["prime", "save"]
    prime = server.requests[0][1]
    assert prime["messages"] == [{"role": "system", "content": PREFIX}]  # no request, no answer in the file
    assert prime["id_slot"] == 0 and prime["max_tokens"] == 1 and prime["model"] == "gemma-3-270m"
    saved_as = server.requests[1][1]["filename"]
    assert saved_as != file_name(PREFIX) and saved_as.startswith(file_name(PREFIX))  # written aside, then renamed
    assert sorted(p.name for p in slots.folder.iterdir()) == [file_name(PREFIX)]
    assert (slots.folder / file_name(PREFIX)).read_text() == MAGIC + PREFIX
    (record,) = log.of("local_slot_saved")
    assert record["tokens"] == len(PREFIX.split()) and record["prompt_tokens"] == len(PREFIX.split())
    assert record["seconds"] == 0.25 and record["prime_seconds"] == 0.25  # the injected clock, one tick each
    assert log.kinds() == ["local_slot_saved"]


def test_a_saved_prefix_is_restored_into_slot_0_and_nothing_is_primed_or_saved(tmp_path: Path) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)
    warm(slots, server)
    path = slots.folder / file_name(PREFIX)
    os.utime(path, (1_000_000, 1_000_000))
    later = FakeSlotServer(slots.folder)  # a new process: empty slots

    assert warm(slots, later) == "restored"

    assert later.steps() == ["restore"] and later.requests[0][1] == {"filename": file_name(PREFIX)}
    assert later.slots == {0: PREFIX}
    assert path.stat().st_mtime > 1_000_000  # used now: the last to be evicted
    assert log.of("local_slot_restored") == [{"file": str(path), "tokens": len(PREFIX.split()), "seconds": 0.25}]


def test_another_prefix_gets_a_file_of_its_own(tmp_path: Path) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)
    warm(slots, server)

    assert warm(slots, FakeSlotServer(slots.folder), "a prefix with other tools " * 20) == "saved"

    assert len(list(slots.folder.iterdir())) == 2


@pytest.mark.parametrize("content", [b"", b"GGSQ\x00\x01 truncated", b"\xff\xfe not even text"])
def test_a_corrupt_file_is_dropped_and_replaced_by_a_fresh_save(tmp_path: Path, content: bytes) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)
    (slots.folder / file_name(PREFIX)).write_bytes(content)

    assert warm(slots, server) == "saved"

    assert server.steps() == ["restore", "prime", "save"]
    assert (slots.folder / file_name(PREFIX)).read_text() == MAGIC + PREFIX
    (record,) = log.of("local_slot_saved")
    assert record["replaced"].startswith("HTTP 400: Unable to restore slot")
    assert log.of("local_slot_cache_skipped") == []


def test_a_symlink_in_the_folder_is_never_handed_to_the_server(tmp_path: Path) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)
    secret = tmp_path / "elsewhere.txt"
    secret.write_text(MAGIC + "not ours")
    (slots.folder / file_name(PREFIX)).symlink_to(secret)

    assert warm(slots, server) == "saved"

    assert server.steps() == ["prime", "save"]
    assert secret.read_text() == MAGIC + "not ours"
    assert not (slots.folder / file_name(PREFIX)).is_symlink()


@pytest.mark.parametrize(
    ("fail", "step"),
    [
        ({"prime": 500}, "prime"),
        ({"prime": 400}, "prime"),
        ({"save": 500}, "save"),
        ({"save": 501}, "save"),  # a server started without --slot-save-path
        ({"prime": httpx.ConnectError("connection refused")}, "prime"),
        ({"save": httpx.ReadTimeout("timed out")}, "save"),
    ],
)
def test_a_refused_or_failed_step_leaves_the_run_cold_with_one_record_and_no_file(
    tmp_path: Path, fail: dict[str, int | Exception], step: str
) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)
    server.fail = fail

    assert warm(slots, server) == "cold"

    assert list(slots.folder.iterdir()) == []  # no half-written or temporary file left behind
    (record,) = log.of("local_slot_cache_skipped")
    assert record["step"] == step and record["reason"]
    assert log.kinds() == ["local_slot_cache_skipped"]


def test_a_restore_the_server_refuses_with_5xx_keeps_the_file_and_the_run_goes_on(tmp_path: Path) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)
    warm(slots, server)
    later = FakeSlotServer(slots.folder, fail={"restore": 503, "prime": 503})

    assert warm(slots, later) == "cold"

    assert (slots.folder / file_name(PREFIX)).exists()  # not the file's fault
    (record,) = log.of("local_slot_cache_skipped")
    assert record["step"] == "prime" and "after a restore that failed: HTTP 503" in record["reason"]


def test_an_empty_slot_is_not_saved(tmp_path: Path) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)
    server.on_request = lambda step: server.slots.clear() if step == "save" else None  # evicted before the save

    assert warm(slots, server) == "cold"

    assert list(slots.folder.iterdir()) == []
    assert log.of("local_slot_cache_skipped")[0]["reason"] == "slot 0 was empty"


def test_a_folder_that_cannot_be_made_turns_the_cache_off_with_one_record(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    log = ListLog()

    assert cache(tmp_path / "file" / "slots", log).prepare() is None

    (record,) = log.of("local_slot_cache_skipped")
    assert record["step"] == "folder"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_still_restores_and_a_failed_save_leaves_the_run_cold(tmp_path: Path) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)
    warm(slots, server)
    slots.folder.chmod(0o500)
    try:
        assert warm(slots, FakeSlotServer(slots.folder)) == "restored"
        assert warm(slots, FakeSlotServer(slots.folder), "another prefix " * 30) == "cold"
    finally:
        slots.folder.chmod(0o700)
    assert log.of("local_slot_cache_skipped")[0]["step"] == "save"


def test_the_cache_stays_under_its_bound_dropping_the_least_recently_used_files_of_any_layout(tmp_path: Path) -> None:
    log = ListLog()
    root = tmp_path / "slots"
    old = cache(root, log, layout="old-build")
    old_folder = old.prepare()
    assert old_folder is not None
    warm(old, FakeSlotServer(old_folder), "p1 " * 400)
    size = next(old_folder.iterdir()).stat().st_size
    os.utime(next(old_folder.iterdir()), (1_000, 1_000))
    slots, server = ready(tmp_path, log, max_bytes=2 * size + 10)
    warm(slots, server, "p2 " * 400)
    os.utime(slots.folder / file_name("p2 " * 400), (2_000, 2_000))

    warm(slots, FakeSlotServer(slots.folder), "p3 " * 400)

    assert not old_folder.exists()  # its only file was the oldest: the folder goes with it
    assert sorted(p.name for p in slots.folder.iterdir()) == sorted([file_name("p2 " * 400), file_name("p3 " * 400)])


def test_cancellation_is_not_swallowed(tmp_path: Path) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)
    server.fail = {"prime": asyncio.CancelledError()}

    with pytest.raises(asyncio.CancelledError):
        warm(slots, server)


def test_a_rename_the_file_system_refuses_leaves_the_run_cold_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = ListLog()
    slots, server = ready(tmp_path, log)

    def read_only(src: object, dst: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr("aeon.adapters.llm._slot_cache.os.replace", read_only)

    assert warm(slots, server) == "cold"

    assert list(slots.folder.iterdir()) == []
    assert log.of("local_slot_cache_skipped")[0]["reason"] == "[Errno 30] Read-only file system"


def test_the_layout_key_changes_with_the_build_the_model_and_the_context_size(tmp_path: Path) -> None:
    binary, model = tmp_path / "llama-server", tmp_path / "model.gguf"
    binary.write_bytes(b"build 1")
    model.write_bytes(b"GGUF")
    key = layout_key(binary, model, ctx_size=8192)

    assert layout_key(binary, model, ctx_size=8192) == key and len(key) == 16
    assert layout_key(binary, model, ctx_size=4096) != key
    binary.write_bytes(b"build 2, rebuilt")
    assert layout_key(binary, model, ctx_size=8192) != key
