"""Aeon: an LLM orchestration kernel with declarative plans, supervised repair and bounded loops."""
