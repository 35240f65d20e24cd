"""Adapters: concrete implementations of the application ports (LLMs, tools, memory, event log)."""
