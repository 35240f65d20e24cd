"""The local server's KV cache of a run's shared prompt prefix, kept on disk between processes (llama-server slots).

Every call of a run opens with one system message, the shared prompt prefix (application/llm/prompts/layout.py).
A fresh llama-server has an empty KV cache, so the first call of every `aeon run` used to process those ~1,250
tokens again (seconds on a small CPU). `SlotCache.warm` runs once, after /health and before the first completion:

- a file for this prefix exists: restore it into slot 0 (`POST /slots/0?action=restore`, milliseconds); the first
  call then lands on slot 0, whose cached prompt shares the longest prefix with it, and processes only its own part;
- none (or it would not load): prime slot 0 with the prefix alone (a one-token completion pinned to slot 0), save
  the slot under a temporary name (`?action=save`) and rename it into place, so a file is whole or absent.

A file holds the prefix's tokens and KV state only, never a request or an answer. Files live in one folder per KV
layout (binary, model, template, flags: `layout_key`), named by the sha256 of the prefix; the whole cache is kept
under `max_bytes`, the least recently used files going first. It is a cache: any failure (a missing, corrupt or
foreign file, a read-only folder, an error status from the server) leaves the run cold, with one
`local_slot_cache_skipped` record naming the step and the reason.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from aeon.adapters.llm._keeper import loopback_tls
from aeon.application.ports import LoggerPort
from aeon.domain.log_llm import LocalSlotCacheSkippedRecord, LocalSlotRestoredRecord, LocalSlotSavedRecord
from aeon.domain.log_records import LogRecord

SUFFIX = ".slot"
_TMP = ".tmp"
_CONTROL_TIMEOUT = 10.0  # a restore or save reads or writes ~10 MB; past this, the server is stuck: go on cold


def file_name(prefix: str) -> str:
    """The file of a prefix: hex only, which llama-server accepts as a file name and no path can be built from."""
    return hashlib.sha256(prefix.encode("utf-8")).hexdigest()[:32] + SUFFIX


class SlotCacheSkipped(Exception):
    """One step of warming the cache did not work; the run goes on cold."""


# A cache: whatever goes wrong while warming it, the run goes on cold and the record says why. Cancellation (a
# BaseException) still propagates.
_FAILURES = (Exception,)


def _reason(exc: Exception) -> str:
    expected = isinstance(exc, (SlotCacheSkipped, httpx.HTTPError, OSError, ValueError))
    return (str(exc) if expected else f"{type(exc).__name__}: {exc}") or type(exc).__name__


class SlotCache:
    """Slot files of one KV layout in `root / layout` (see the module docstring). Never raises but cancellation."""

    def __init__(
        self,
        root: Path,
        layout: str,
        *,
        max_bytes: int,
        model: str,
        prime_timeout: float,
        logger: LoggerPort | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = root
        self.folder = root / layout
        self._max_bytes = max_bytes
        self._model = model
        self._prime_timeout = prime_timeout
        self._logger = logger
        self._clock = clock

    def prepare(self) -> Path | None:
        """Create the folder (private to the user: the prefix names the tools); None when it cannot be made."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            self._skipped("folder", f"{self.folder}: {exc.strerror or exc}")
            return None
        return self.folder

    async def warm_at(self, base_url: str, key: str | None, prefix: str) -> str:
        """`warm` on the server at `base_url` (with its API key, if it has one)."""
        headers = {"authorization": f"Bearer {key}"} if key else {}
        tls = loopback_tls()
        async with httpx.AsyncClient(base_url=base_url, headers=headers, trust_env=False, verify=tls) as control:
            return await self.warm(control, prefix)

    async def warm(self, client: httpx.AsyncClient, prefix: str) -> str:
        """Restore `prefix`'s file into slot 0, else prime slot 0 with it and save it: "restored", "saved" or
        "cold". One record says which (`local_slot_restored`, `local_slot_saved`, `local_slot_cache_skipped`)."""
        path = self.folder / file_name(prefix)
        unloadable: str | None = None
        if _usable(path):
            try:
                await self._restore(client, path)
                return "restored"
            except _FAILURES as exc:
                unloadable = _reason(exc)
        step = "prime"
        try:
            primed = await self._prime(client, prefix)
            step = "save"
            await self._save(client, path, {**primed, "replaced": unloadable} if unloadable else primed)
        except _FAILURES as exc:
            self._skipped(step, _reason(exc) + (f" (after a restore that failed: {unloadable})" if unloadable else ""))
            return "cold"
        return "saved"

    async def _restore(self, client: httpx.AsyncClient, path: Path) -> None:
        began = self._clock()
        response = await client.post(
            "/slots/0", params={"action": "restore"}, json={"filename": path.name}, timeout=_CONTROL_TIMEOUT
        )
        restored = _count(response, "n_restored")
        if not restored:
            if response.is_client_error:  # the server would not load it (truncated, another layout): it never will
                _forget(path)
            raise SlotCacheSkipped(_why(response) if restored is None else "the file held no tokens")
        _touch(path)  # recently used: evicted last
        self._emit(LocalSlotRestoredRecord(file=str(path), tokens=restored, seconds=self._seconds(began)))

    async def _prime(self, client: httpx.AsyncClient, prefix: str) -> dict[str, Any]:
        """A one-token completion of the prefix alone, pinned to slot 0: the slot then holds the prefix's KV."""
        began = self._clock()
        body = {
            "model": self._model,
            "messages": [{"role": "system", "content": prefix}],
            "max_tokens": 1,
            "temperature": 0.0,
            "id_slot": 0,
        }
        response = await client.post("/v1/chat/completions", json=body, timeout=self._prime_timeout)
        if response.status_code != 200:
            raise SlotCacheSkipped(_why(response))
        data = response.json()
        usage = data.get("usage") if isinstance(data, dict) else None
        tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        return {"prompt_tokens": tokens, "prime_seconds": self._seconds(began)}

    async def _save(self, client: httpx.AsyncClient, path: Path, primed: dict[str, Any]) -> None:
        began = self._clock()
        tmp = path.with_name(f"{path.name}.{os.getpid()}{_TMP}")
        response = await client.post(
            "/slots/0", params={"action": "save"}, json={"filename": tmp.name}, timeout=_CONTROL_TIMEOUT
        )
        saved = _count(response, "n_saved")
        if not saved:
            _forget(tmp)
            raise SlotCacheSkipped(_why(response) if saved is None else "slot 0 was empty")
        size = _publish(tmp, path)
        seconds = self._seconds(began)
        self._emit(LocalSlotSavedRecord(file=str(path), tokens=saved, bytes=size, seconds=seconds, **primed))
        self._evict(keep=path)

    def _evict(self, *, keep: Path) -> None:
        """Delete the least recently used files (of every layout) until the cache fits `max_bytes`."""
        try:  # another process may be evicting too: a file gone meanwhile is no error, only a smaller cache
            files = [(p.stat(), p) for p in self.root.glob(f"*/*{SUFFIX}*") if p.is_file() and p != keep]
            total = keep.stat().st_size + sum(st.st_size for st, _ in files)
        except OSError:
            return
        for st, p in sorted(files, key=lambda f: f[0].st_mtime):
            if total <= self._max_bytes:
                break
            with contextlib.suppress(OSError):
                p.unlink()
                total -= st.st_size
                if p.parent != self.folder:
                    with contextlib.suppress(OSError):
                        p.parent.rmdir()  # an old layout's folder, once empty

    def _seconds(self, began: float) -> float:
        return round(self._clock() - began, 3)

    def _skipped(self, step: str, reason: str) -> None:
        self._emit(LocalSlotCacheSkippedRecord(step=step, reason=reason[:300]))

    def _emit(self, record: LogRecord) -> None:
        if self._logger is not None:
            self._logger.emit(record)


def _usable(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(path)


def _forget(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _publish(tmp: Path, path: Path) -> int:
    """Rename the server's file into place (whole or absent: a reader never sees a half-written file); its size."""
    try:
        os.replace(tmp, path)
    except OSError:
        _forget(tmp)
        raise
    return path.stat().st_size


def _count(response: httpx.Response, key: str) -> int | None:
    """The token count a 200 answer of a slot action carries; None for any other answer."""
    if response.status_code != 200:
        return None
    try:
        value = response.json().get(key)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and value >= 0 else None


def _why(response: httpx.Response) -> str:
    """The server's own message for a refused action, on one line."""
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = response.text[:200]
    return f"HTTP {response.status_code}: {' '.join(str(message).split())}"
