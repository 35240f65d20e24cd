"""The `tools.mcp` section: one-line errors naming the server, env markers in lists and maps, credentials redacted,
and the adapter fed typed fields; no server is started here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from aeon.adapters.tools.mcp import ToolFlags
from aeon.adapters.tools.settings import mcp_server
from aeon.application.errors import ConfigurationError
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.secrets import run_secrets

from cli_harness import assert_exit, invoke, one_line

pytestmark = pytest.mark.usefixtures("isolated_env")


def config(tmp_path: Path, *servers: dict[str, Any]) -> Path:
    path = tmp_path / "mcp.yaml"
    path.write_text(yaml.safe_dump({"tools": {"mcp": list(servers)}}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("server", "problem"),
    [
        (
            {"name": "both", "command": "x", "url": "http://127.0.0.1:1/mcp"},
            "at tools.mcp.0 (MCP server 'both'): both command (stdio) and url (streamable HTTP) given: give one",
        ),
        (
            {"name": "none"},
            "at tools.mcp.0 (MCP server 'none'): neither command (stdio) nor url (streamable HTTP) given",
        ),
        (
            {"name": "typo", "comand": "x"},
            "at tools.mcp.0.comand (MCP server 'typo'): unknown key (did you mean 'command'?)",
        ),
        (
            {"name": "web", "url": "http://h/mcp", "env": {"A": "b"}},
            "at tools.mcp.0 (MCP server 'web'): args and env are for a command (stdio)",
        ),
        (
            {"name": "cmd", "command": "x", "headers": {"A": "b"}},
            "at tools.mcp.0 (MCP server 'cmd'): headers are for a url (streamable HTTP)",
        ),
        ({"name": "ftp", "url": "ftp://h/mcp"}, "url must start with http:// or https://"),
        ({"name": "bad name!", "command": "x"}, "at tools.mcp.0.name (MCP server 'bad name!'): String should match"),
        ({"name": "p", "command": "x", "prefix": "a.b"}, "at tools.mcp.0.prefix (MCP server 'p'): String should match"),
        (
            {"name": "t", "command": "x", "timeout": 0},
            "at tools.mcp.0.timeout (MCP server 't'): Input should be greater",
        ),
        (
            {"name": "o", "command": "x", "overrides": {"a": {"approve": True}}},
            "at tools.mcp.0.overrides.a.approve (MCP server 'o'): unknown key [from",  # nothing close: no guess
        ),
        (
            {"name": "o", "command": "x", "overrides": {"a": {"requires_aproval": True}}},
            "(MCP server 'o'): unknown key (did you mean 'requires_approval'?)",
        ),
    ],
)
def test_a_bad_server_entry_is_exit_2_with_one_line_naming_it(
    tmp_path: Path, server: dict[str, Any], problem: str
) -> None:
    out = invoke("tools", "--config", config(tmp_path, server))
    assert_exit(out, 2)
    assert problem in one_line(out.stderr)


@pytest.mark.parametrize("header", ["Authorization", "authorization"])
@pytest.mark.parametrize("userinfo", ["bob:pw-in-the-url@", "token-in-the-url@"])
def test_a_url_with_credentials_and_an_authorization_header_is_refused(
    tmp_path: Path, header: str, userinfo: str
) -> None:
    server = {"name": "web", "url": f"https://{userinfo}h/mcp", "headers": {header: "Bearer header-token-123"}}
    out = invoke("tools", "--config", config(tmp_path, server))

    assert_exit(out, 2)
    line = one_line(out.stderr)
    assert (
        "at tools.mcp.0 (MCP server 'web'): url carries a user and password and headers carries an Authorization"
        in line
    )
    assert "in-the-url" not in line and "header-token-123" not in line


def test_a_url_with_credentials_and_other_headers_is_accepted(tmp_path: Path) -> None:
    server = {"name": "web", "url": "https://bob:pw@h/mcp", "headers": {"X-Api-Key": "k", "Authorization": "${NOPE:}"}}
    settings = load_settings(config(tmp_path, server))  # an Authorization left empty by its marker is not sent

    assert settings.tools.mcp[0].url == "https://bob:pw@h/mcp"


def test_two_servers_with_one_name_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="MCP server names must differ: 'x' given twice"):
        load_settings(config(tmp_path, {"name": "x", "command": "a"}, {"name": "x", "command": "b"}))


def test_markers_are_replaced_in_args_env_and_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONE", "Asia/Tokyo")
    monkeypatch.setenv("DEPLOY_THING", "value-from-the-environment")
    stdio = {"name": "s", "command": "srv", "args": ["--zone", "${ZONE}"], "env": {"X": "${DEPLOY_THING}"}}
    web = {"name": "w", "url": "https://u:pw-in-the-url@h/mcp", "headers": {"X-Key": "${DEPLOY_THING}"}}
    settings = load_settings(config(tmp_path, stdio, web))

    s, w = (mcp_server(server) for server in settings.tools.mcp)

    assert s.args == ("--zone", "Asia/Tokyo") and s.env == {"X": "value-from-the-environment"}
    assert w.headers == {"X-Key": "value-from-the-environment"} and w.transport == "streamable HTTP"
    assert "value-from-the-environment" not in repr(s) + repr(w) + repr(settings)  # never in a repr


def test_an_unset_marker_leaves_its_env_or_header_out(tmp_path: Path) -> None:
    server = {"name": "s", "command": "srv", "env": {"MAYBE": "${NOT_SET_ANYWHERE:}", "KEEP": "1"}}
    assert mcp_server(load_settings(config(tmp_path, server)).tools.mcp[0]).env == {"KEEP": "1"}


def test_values_markers_put_into_env_and_headers_are_secrets_whatever_their_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLAIN_NAME", "innocent-looking-credential")
    monkeypatch.setenv("SHORT", "1")
    monkeypatch.setenv("ZONE", "Europe/Paris-not-a-secret")
    stdio = {
        "name": "s",
        "command": "srv",
        "args": ["${ZONE}"],  # an argument is not a credential
        "env": {"A": "${PLAIN_NAME}", "DEBUG": "${SHORT}", "GITHUB_TOKEN": "literal-token-in-the-file"},
    }
    web = {"name": "w", "url": "https://user:url-password-123@h/mcp", "headers": {"X-Api-Key": "literal-key-5678"}}
    bearer = {"name": "b", "url": "https://h/mcp", "headers": {"Authorization": "Bearer literal-1234"}}

    secrets = run_secrets(load_settings(config(tmp_path, stdio, web, bearer)), environ={})

    assert {"innocent-looking-credential", "literal-token-in-the-file", "Bearer literal-1234"} <= set(secrets)
    assert "literal-key-5678" in secrets
    assert "url-password-123" in secrets
    assert "1" not in secrets and "Europe/Paris-not-a-secret" not in secrets  # a flag, an argument


def test_flags_reach_the_adapter_per_server_and_per_tool(tmp_path: Path) -> None:
    server = {
        "name": "s",
        "command": "srv",
        "include": ["a", "b"],
        "prefix": "s_",
        "timeout": 5,
        "start_timeout": 9,
        "requires_approval": True,
        "overrides": {"b": {"requires_approval": False, "idempotent": True}},
    }
    adapter = mcp_server(load_settings(config(tmp_path, server)).tools.mcp[0])

    assert adapter.include == ("a", "b") and adapter.prefix == "s_"
    assert (adapter.timeout, adapter.start_timeout) == (5, 9)
    assert adapter.flags == ToolFlags(requires_approval=True)
    assert adapter.overrides == {"b": ToolFlags(requires_approval=False, idempotent=True)}
