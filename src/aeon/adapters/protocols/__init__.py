"""The protocols other programs speak to `aeon serve` in (A2A, AG-UI): their SDKs and their routes."""
