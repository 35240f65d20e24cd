"""dependency-injector's containers and providers, imported without the web frameworks its wiring looks for.

Its wiring module imports starlette, when installed (the MCP SDK brings it), only to skip starlette's Request while
wiring functions; Aeon wires none (the container lives in `ctx.obj`), and that import costs every command 10-20 ms
of start-up. A `None` in `sys.modules` makes it an ImportError, which wiring expects; a later real import of
starlette (`aeon mcp`) is untouched.
"""

from __future__ import annotations

import sys

_SKIPPED = [name for name in ("starlette.requests",) if name not in sys.modules]
for name in _SKIPPED:
    sys.modules[name] = None  # type: ignore[assignment]  # the import system's own "not importable" mark
try:
    from dependency_injector import containers, providers
finally:
    for name in _SKIPPED:
        if sys.modules.get(name, ...) is None:
            del sys.modules[name]

__all__ = ["containers", "providers"]
