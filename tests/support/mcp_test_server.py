"""An MCP server built with the SDK's own MCPServer, for Aeon's MCP client tests: over stdio (`--stdio`) or
streamable HTTP on 127.0.0.1 (`--port N`, optionally requiring `--token T` as a Bearer token).

Its tools cover what a client meets: structured output, an `isError` answer, an image, a resource blob, a slow
call, a huge answer, a crash, a malformed message, each annotation, and a name Aeon cannot take.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time
from typing import Any

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import BlobResourceContents, EmbeddedResource, TextContent, ToolAnnotations

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

server = MCPServer("aeon-test", version="1.0")
ADDED: list[int] = []


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    ADDED.append(a + b)
    return a + b


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def tally() -> int:
    """How many times `add` ran."""
    return len(ADDED)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def refuse(reason: str) -> str:
    """Always fails, saying why."""
    raise ToolError(f"refused: {reason}")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def picture() -> list[Any]:
    """A 1x1 PNG and a caption."""
    return [Image(data=PNG, format="png"), "a tiny picture"]


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def blob() -> list[Any]:
    """An embedded binary resource."""
    contents = BlobResourceContents(uri="file:///data.bin", mime_type="application/octet-stream", blob="AAEC")
    return [EmbeddedResource(type="resource", resource=contents), TextContent(type="text", text="three bytes")]


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def slow(seconds: float) -> str:
    """Sleeps, then answers."""
    time.sleep(seconds)
    return "awake"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def flood(megabytes: int) -> str:
    """A text of `megabytes` MiB: an answer far over any client's cap."""
    return "x" * (megabytes << 20)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def crash() -> str:
    """The server process dies at once (a crash mid-run)."""
    sys.stderr.write("test server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def garble() -> str:
    """Writes a line that is not JSON-RPC on the wire (stdio only), then never answers."""
    from mcp.server import stdio  # the SDK serves the wire from a private copy of fd 1 (fd 1 goes to stderr)

    claim = stdio._claims.get(1)
    os.write(claim.private_fd if claim is not None and claim.private_fd is not None else 1, b"not JSON-RPC\n")
    time.sleep(30)
    return "too late"


@server.tool(annotations=ToolAnnotations(destructiveHint=True))
def delete_things(what: str) -> str:
    """Deletes things (says it is destructive)."""
    return f"deleted {what}"


@server.tool(annotations=ToolAnnotations(destructiveHint=False, idempotentHint=True))
def upsert(key: str) -> str:
    """Writes a key, the same way each time (idempotent, not destructive)."""
    return f"stored {key}"


@server.tool()
def plain(text: str) -> str:
    """No annotations at all."""
    return text


@server.tool(name="bad.name", annotations=ToolAnnotations(readOnlyHint=True))
def bad_name() -> str:
    """A name Aeon's rule does not allow (a dot)."""
    return "unreachable"


def _require_token(app: Any, token: str, header: str) -> Any:
    """The ASGI app, answering 401 to a request without the header: `Authorization: Bearer <token>`, or
    `<header>: <token>` for another header."""
    wanted = (header.lower().encode(), (f"Bearer {token}" if header.lower() == "authorization" else token).encode())

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and wanted not in scope["headers"]:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"no token"})
            return
        await app(scope, receive, send)

    return guarded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--port", type=int)
    parser.add_argument("--token")
    parser.add_argument("--header", default="Authorization", help="the header that must carry the token")
    parser.add_argument("--tag", help="ignored: lets a test find this process by its command line")
    parser.add_argument("--journal", help="a file this server appends a line to when it starts")
    args = parser.parse_args()
    if args.journal:
        with open(args.journal, "a", encoding="utf-8") as journal:
            journal.write(f"started {os.getpid()}\n")
    if args.stdio:
        server.run("stdio")
        return
    import uvicorn

    app = server.streamable_http_app()
    if args.token:
        app = _require_token(app, args.token, args.header)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
