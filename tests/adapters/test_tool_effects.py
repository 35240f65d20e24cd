"""What a tool declares about its calls and outputs: `@tool(effect=..., trusted=...)`, MCP annotations seeding the
effect (every MCP server's outputs untrusted), a tools module's outputs untrusted unless a tool says otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from aeon.adapters.tools import ToolRegistry, load_tool_modules, register_builtins
from aeon.adapters.tools.decorator import tool, tool_definition
from aeon.adapters.tools.mcp import McpServerConfig
from aeon.adapters.tools.mcp.catalog import catalog
from aeon.application.errors import ToolRegistrationError
from aeon.application.policy import Policy, ServerRule
from aeon.domain.provenance import Effect


def test_the_builtins_compute_only_and_their_outputs_are_trusted() -> None:
    for spec in register_builtins(ToolRegistry()):
        assert spec.effect is Effect.NONE and spec.trusted_output is True


def test_a_tool_declares_its_effect_and_whether_its_output_is_trusted() -> None:
    @tool(effect="external", trusted=False)
    def pay(recipient: str) -> str:
        """Pay someone."""
        return "paid"

    definition = tool_definition(pay)
    assert definition is not None
    assert definition.spec.effect is Effect.EXTERNAL and definition.spec.trusted_output is False
    with pytest.raises(ToolRegistrationError, match="effect 'sends'"):
        tool(effect="sends")


@pytest.mark.parametrize(
    ("annotations", "effect"),
    [
        ({"readOnlyHint": True}, Effect.READ),
        ({"openWorldHint": True, "destructiveHint": True}, Effect.EXTERNAL),
        ({"destructiveHint": True}, Effect.WRITE),
        (None, None),
    ],
)
def test_mcp_annotations_seed_the_effect_and_a_server_is_untrusted_unless_the_policy_says(
    annotations: dict[str, Any] | None, effect: Effect | None
) -> None:
    listed = {"name": "t", "description": "d", "inputSchema": {"type": "object"}}
    if annotations is not None:
        listed["annotations"] = annotations
    (spec,) = catalog(McpServerConfig(name="srv", command="srv"), [listed]).specs
    assert spec.effect is effect
    assert Policy().output_label(spec).trusted is False
    assert Policy().output_label(spec).sources == ("mcp:srv/t",)
    assert Policy(servers={"srv": ServerRule(trusted=True)}).output_label(spec).trusted is True


def test_a_tools_modules_outputs_are_untrusted_unless_a_tool_says_so() -> None:
    specs = load_tool_modules(ToolRegistry(), ["fixtures_user_tools"])
    assert specs and all(s.trusted_output is False for s in specs)
    assert all(Policy().output_label(s).trusted is False for s in specs)
