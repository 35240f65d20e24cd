"""The model clients' defaults, written once: the `llm:` settings section (adapters/llm/settings.py) defaults to these,
and an adapter built without a value (a test, an embedding program) takes the same one."""

from __future__ import annotations

from aeon.domain.llm import DEFAULT_MAX_TOKENS

MAX_TOKENS = DEFAULT_MAX_TOKENS  # the kernel prices a call's worst case at it too
READ_TIMEOUT = 120.0
MAX_ATTEMPTS = 3
TEMPERATURE = 0.0
ANTHROPIC_VERSION = "2023-06-01"
# local adapter (llama.cpp's llama-server)
CTX_SIZE = 8192
STARTUP_TIMEOUT = 120.0
SLOT_CACHE_MB = 256
KEEP_ALIVE = 300.0  # seconds, as Ollama keeps a model loaded for five minutes
