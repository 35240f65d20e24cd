"""Webhooks: a run's end POSTed to a configured address, signed and retried (sender.py)."""
