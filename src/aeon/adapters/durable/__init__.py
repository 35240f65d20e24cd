"""Durable runs on DBOS: LLM and tool calls as recorded steps, phase checkpoints, a log that is written once."""
