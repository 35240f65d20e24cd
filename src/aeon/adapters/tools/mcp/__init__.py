"""MCP tool servers as Aeon tools, through the official `mcp` SDK's client (imported only when a server starts)."""

from aeon.adapters.tools.mcp.catalog import annotated_flags
from aeon.adapters.tools.mcp.config import McpServerConfig, ToolFlags
from aeon.adapters.tools.mcp.host import McpTools

__all__ = ["McpServerConfig", "McpTools", "ToolFlags", "annotated_flags"]
