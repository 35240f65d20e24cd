"""The protocols other programs speak to `aeon serve` in (A2A, AG-UI): the SDK side of its doors, no web framework."""
