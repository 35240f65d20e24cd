"""Entrypoints: settings, the composition root (container) and the typer CLI."""
