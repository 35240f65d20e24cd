"""How a server's tools/list becomes Aeon tools, and a tools/call result an output: pure rules, no server."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from aeon.adapters.tools.mcp import McpServerConfig, ToolFlags, annotated_flags
from aeon.adapters.tools.mcp.catalog import catalog
from aeon.adapters.tools.mcp.results import MalformedResult, block_record, error_text, tool_output
from aeon.application.errors import ConfigurationError

OBJECT = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}


def listed(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": f"the {name} tool", "inputSchema": OBJECT, **extra}


def server(**fields: Any) -> McpServerConfig:
    return McpServerConfig(name="srv", command="srv", **fields)


# -- annotations, read with the MCP spec's defaults ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("annotations", "idempotent", "approval"),
    [
        (None, False, True),  # nothing said: destructiveHint defaults to true, idempotentHint to false
        ({}, False, True),
        ({"readOnlyHint": True}, True, False),  # read-only: safe to run again, nothing to approve
        ({"readOnlyHint": True, "destructiveHint": True}, True, False),  # destructive means nothing when read-only
        ({"destructiveHint": False}, False, False),
        ({"destructiveHint": False, "idempotentHint": True}, True, False),
        ({"idempotentHint": True}, True, True),  # idempotent, but destructive by default
        ({"readOnlyHint": False, "destructiveHint": True}, False, True),
        ({"openWorldHint": False}, False, True),
    ],
)
def test_annotations_map_to_flags_with_the_specs_defaults(
    annotations: dict[str, Any] | None, idempotent: bool, approval: bool
) -> None:
    assert annotated_flags(annotations) == (idempotent, approval)


def test_config_overrides_annotations_per_server_then_per_tool() -> None:
    tools = [listed("safe", annotations={"readOnlyHint": True}), listed("wipe", annotations={"destructiveHint": True})]
    config = server(
        flags=ToolFlags(requires_approval=True),
        overrides={"wipe": ToolFlags(requires_approval=False, idempotent=True)},
    )
    specs = {s.name: s for s in catalog(config, tools).specs}

    assert specs["safe"].requires_approval and specs["safe"].idempotent  # the server's flag; the annotation's rest
    assert not specs["wipe"].requires_approval and specs["wipe"].idempotent  # the tool's own override wins


# -- names, include, exclude, prefix --------------------------------------------------------------------------------
def test_tools_become_specs_named_with_the_prefix_and_the_server() -> None:
    found = catalog(server(prefix="s_"), [listed("a", outputSchema={"type": "object"}), listed("b")])

    assert [(s.name, s.server) for s in found.specs] == [("s_a", "srv"), ("s_b", "srv")]
    assert found.names == {"s_a": "a", "s_b": "b"}
    a, b = found.specs
    assert a.input_schema == OBJECT and a.output_schema == {"type": "object"} and a.description == "the a tool"
    assert b.output_schema == {}  # no outputSchema: any output
    assert not a.output_inferred  # declared by the server: a mismatch fails the step whatever tools.output_check says


def test_a_tool_whose_name_already_starts_with_the_prefix_keeps_it_once() -> None:
    found = catalog(server(prefix="git_"), [listed("git_log"), listed("status")])  # mcp-server-git's names

    assert found.names == {"git_log": "git_log", "git_status": "status"}


def test_include_narrows_and_exclude_removes_by_the_servers_own_names() -> None:
    tools = [listed("a"), listed("b"), listed("c")]
    assert [s.name for s in catalog(server(include=("a", "c"), prefix="p-"), tools).specs] == ["p-a", "p-c"]
    assert [s.name for s in catalog(server(exclude=("b",)), tools).specs] == ["a", "c"]


@pytest.mark.parametrize(
    "fields",
    [{"include": ("a", "nope")}, {"exclude": ("nope",)}, {"overrides": {"nope": ToolFlags(idempotent=True)}}],
)
def test_a_name_the_server_does_not_list_is_a_config_error_naming_server_and_tool(fields: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match=r"tools.mcp server 'srv': \w+ names 'nope'.*it lists: a"):
        catalog(server(**fields), [listed("a")])


def test_a_tool_aeon_cannot_name_is_skipped_with_a_warning_unless_included() -> None:
    tools = [listed("get.time"), listed("ok")]
    found = catalog(server(), tools)

    assert [s.name for s in found.specs] == ["ok"]
    assert found.warnings == [
        "MCP server 'srv': skipped tool 'get.time': name must be 1-64 characters of letters, digits, '_' or '-'"
    ]
    with pytest.raises(ConfigurationError, match=r"tools.mcp server .srv.: cannot include tool .get\.time.: name must"):
        catalog(server(include=("get.time",)), tools)


def test_a_prefix_that_makes_a_name_too_long_skips_that_tool() -> None:
    found = catalog(server(prefix="p" * 59), [listed("short"), listed("longer_name")])  # 64, 65 characters
    assert [s.name for s in found.specs] == ["p" * 59 + "short"]
    assert "skipped tool '" in found.warnings[0]


@pytest.mark.parametrize(
    ("tool", "why"),
    [
        (listed("a", inputSchema={"type": "array"}), 'input_schema must describe an object ("type": "object")'),
        (listed("a", inputSchema="x"), "its inputSchema is not a JSON object"),
        (listed("a", outputSchema={"type": 5}), "output_schema is not a valid JSON schema"),
        (listed("a", description="x" * 70_000), "its listing takes"),
    ],
)
def test_a_tool_with_an_unusable_listing_is_skipped_saying_why(tool: dict[str, Any], why: str) -> None:
    found = catalog(server(), [tool])
    assert found.specs == [] and why in found.warnings[0]


def test_a_long_description_is_clipped() -> None:
    (spec,) = catalog(server(), [listed("a", description="d" * 5000)]).specs
    assert len(spec.description) == 2000 and spec.description.endswith("…")


def test_the_same_name_listed_twice_is_an_error() -> None:
    with pytest.raises(ConfigurationError, match="lists tool 'a' twice"):
        catalog(server(), [listed("a"), listed("a")])


# -- results --------------------------------------------------------------------------------------------------------
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))


def test_structured_content_is_the_output_when_given() -> None:
    raw = {"content": [{"type": "text", "text": '{"n": 1}'}], "structuredContent": {"n": 1}}
    assert tool_output(raw) == {"n": 1}


def test_one_text_block_is_the_text_and_several_blocks_are_records() -> None:
    assert tool_output({"content": [{"type": "text", "text": "hello"}]}) == "hello"
    data = base64.b64encode(PNG).decode()
    raw = {"content": [{"type": "image", "data": data, "mimeType": "image/png"}, {"type": "text", "text": "cap"}]}

    image, caption = tool_output(raw)

    assert image == {
        "type": "image",
        "mime_type": "image/png",
        "bytes": len(PNG),
        "sha256": hashlib.sha256(PNG).hexdigest(),
    }
    assert data not in str(image)  # never the bytes themselves
    assert caption == {"type": "text", "text": "cap"}
    assert tool_output({"content": []}) == []


def test_resources_and_links_are_recorded_by_uri_type_and_size() -> None:
    blob = {"type": "resource", "resource": {"uri": "file:///b", "mimeType": "application/pdf", "blob": "AAEC"}}
    text = {"type": "resource", "resource": {"uri": "file:///t", "mimeType": "text/plain", "text": "hi"}}
    link = {"type": "resource_link", "uri": "file:///l", "name": "l", "mimeType": "text/csv"}
    audio = {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}

    assert block_record(blob) == {
        "type": "resource",
        "uri": "file:///b",
        "mime_type": "application/pdf",
        "bytes": 3,
        "sha256": hashlib.sha256(b"\x00\x01\x02").hexdigest(),
    }
    assert block_record(text) == {"type": "resource", "uri": "file:///t", "mime_type": "text/plain", "text": "hi"}
    assert block_record(link) == {"type": "resource_link", "uri": "file:///l", "name": "l", "mime_type": "text/csv"}
    assert block_record(audio)["bytes"] == 3
    assert block_record({"type": "hologram", "data": "…"}) == {"type": "hologram"}


def test_data_that_is_not_base64_is_a_malformed_result() -> None:
    with pytest.raises(MalformedResult, match="image block's data is not base64"):
        tool_output({"content": [{"type": "image", "data": "not base64!", "mimeType": "image/png"}]})


def test_an_error_result_says_its_text_in_one_line() -> None:
    said = {"isError": True, "content": [{"type": "text", "text": "bad\n  input"}, {"type": "text", "text": "x"}]}
    assert error_text(said) == "bad input x"
    assert error_text({"isError": True, "content": []}) == "no message"
    assert len(error_text({"content": [{"type": "text", "text": "e" * 5000}]})) == 2000
