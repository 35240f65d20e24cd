"""Memory adapters (MemoryPort): key/value stores for step results."""

from aeon.adapters.memory.inmemory import InMemoryKV

__all__ = ["InMemoryKV"]
