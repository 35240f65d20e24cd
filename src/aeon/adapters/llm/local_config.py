"""The `local` provider record's builder: the local adapter from the `llm:` settings, and its default folders."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aeon.adapters.llm.settings import LLMSettings
    from aeon.application.ports import LLMPort, LoggerPort


def from_settings(llm: LLMSettings, *, logger: LoggerPort, status: Callable[[str], None] | None) -> LLMPort:
    """Provider record `local`: the adapter from the `llm:` section (no I/O); as the port: mypy checks it."""
    from aeon.adapters.llm.local import LocalLlamaLLM

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
        keep_alive=llm.keep_alive if os.name == "posix" else 0.0,  # the keeper forks and locks with flock
        servers_dir=default_servers_dir(llm.cache_dir),
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


def default_servers_dir(cache_dir: Path | None) -> Path | None:
    """Where kept local servers are recorded (adapters/llm/_kept_server.py): beside the default slot cache folder,
    `llama-servers` in llm.cache_dir or the user's cache folder; None without a home folder."""
    slots = default_slot_cache_dir(cache_dir)
    return None if slots is None else slots.parent / "llama-servers"
