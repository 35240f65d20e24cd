"""The stdio transport of an MCP server, as the SDK's `stdio_client` but reading no line past a cap.

The SDK joins a server's output into one string until a newline comes (quadratic: a 50 MB answer took a minute of
the host loop, and every later call on it waited behind); here a line over `max_line` bytes is skipped as it
arrives, never held, and the session gets a LineTooLong in its place, which fails the call that waits for it at once.
The process start and the bounded shutdown are the SDK's own.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TextIO

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.client.stdio import (
    StdioServerParameters,
    _aclose_all,
    _create_platform_compatible_process,
    _drain_stdout,
    _get_executable_command,
    _parse_line,
    _stop_server_process,
    get_default_environment,
)
from mcp.os.win32.utilities import ServerProcess
from mcp.shared.message import SessionMessage

_WRITER_FLUSH = 0.5  # seconds the writer has to flush accepted messages at shutdown (the SDK's figure)


class LineTooLong(ValueError):
    """The server sent a message longer than the cap; it was skipped unread."""


class _Lines:
    """Cuts the server's stdout chunks into lines; a line over `max_line` bytes is dropped as it arrives, never held,
    and a LineTooLong is given in its place."""

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self.parts: list[bytes] = []
        self.size = 0
        self.skipping = False

    def feed(self, chunk: bytes) -> list[bytes | LineTooLong]:
        """The lines (and LineTooLongs) that `chunk` completes, in order; the rest is kept for the next chunk."""
        found: list[bytes | LineTooLong] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not self.skipping and self.size + len(piece) > self.max_line:
                self.skipping, self.size = True, 0
                self.parts.clear()
                found.append(LineTooLong(f"a message over {self.max_line:,} bytes"))
            elif not self.skipping:
                self.parts.append(piece)
                self.size += len(piece)
            if end < 0:
                return found
            if not self.skipping:
                found.append(b"".join(self.parts))
            self.parts.clear()
            self.size, self.skipping, start = 0, False, end + 1


async def _read_stdout(
    process: ServerProcess,
    server: StdioServerParameters,
    read_writer: MemoryObjectSendStream[SessionMessage | Exception],
    max_line: int,
) -> None:
    """Hand each line of the server's stdout to the session, parsed; a line over the cap as a LineTooLong."""
    assert process.stdout is not None
    lines = _Lines(max_line)
    try:
        async with read_writer:
            try:
                async for chunk in process.stdout:
                    for line in lines.feed(chunk):
                        if isinstance(line, LineTooLong):
                            await read_writer.send(line)
                        else:
                            text = line.decode(server.encoding, server.encoding_error_handler)
                            await read_writer.send(_parse_line(text))
            finally:
                await _drain_stdout(process)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
        pass  # the session or our shutdown closed the streams: the connection has ended either way


async def _write_stdin(
    process: ServerProcess,
    server: StdioServerParameters,
    write_reader: MemoryObjectReceiveStream[SessionMessage],
    read_writer: MemoryObjectSendStream[SessionMessage | Exception],
    writer_done: anyio.Event,
) -> None:
    """Send the session's messages to the server's stdin, one JSON line each."""
    assert process.stdin is not None
    try:
        async with write_reader:
            async for message in write_reader:
                json = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send((json + "\n").encode(server.encoding, server.encoding_error_handler))
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        await read_writer.aclose()  # the session sees the connection end instead of a request hanging
    finally:
        writer_done.set()


@asynccontextmanager
async def capped_stdio_client(
    server: StdioServerParameters, *, errlog: TextIO, max_line: int
) -> AsyncGenerator[TransportStreams, None]:
    """Start the server and exchange newline-delimited JSON-RPC with it; a line over `max_line` bytes is skipped
    (the session receives a LineTooLong instead) and the next line is read as usual. Raises OSError or ValueError
    when the server cannot be started."""
    command = await _get_executable_command(server.command)
    process = await _create_platform_compatible_process(
        command=command,
        args=server.args,
        env=get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(_WRITER_FLUSH):
            await writer_done.wait()
        await _stop_server_process(process)
        await _aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(_read_stdout, process, server, read_writer, max_line)
        tg.start_soon(_write_stdin, process, server, write_reader, read_writer, writer_done)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
