"""Event log adapters (LoggerPort): where a run's auditable records go."""

from aeon.adapters.eventlog.jsonl import JsonlEventLog

__all__ = ["JsonlEventLog"]
