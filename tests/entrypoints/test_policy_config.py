"""The `policy:` section: validated at boot (a typo is an error naming the key), read by the kernel as written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aeon.application.errors import ConfigurationError
from aeon.domain.provenance import Effect
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import kernel_settings


def _config(tmp_path: Path, policy: dict[str, object]) -> Path:
    path = tmp_path / "aeon.yaml"
    path.write_text(yaml.safe_dump({"policy": policy}), encoding="utf-8")
    return path


def test_the_default_policy_is_on_and_lets_untrusted_steps_call_read_tools_only() -> None:
    policy = kernel_settings(load_settings()).policy
    assert policy.enabled and policy.untrusted_may_call == (Effect.NONE, Effect.READ)


def test_a_policy_from_the_config_reaches_the_kernel(tmp_path: Path) -> None:
    policy = {
        "tools": {"send_money": {"effect": "external", "args": {"amount": "any"}}},
        "servers": {"git": {"trusted": True}},
    }
    read = kernel_settings(load_settings(_config(tmp_path, policy))).policy
    assert read.tools["send_money"].effect is Effect.EXTERNAL and read.tools["send_money"].args == {"amount": "any"}
    assert read.servers["git"].trusted is True


@pytest.mark.parametrize(
    "policy",
    [{"enabeld": False}, {"tools": {"x": {"effect": "sends"}}}, {"tools": {"x": {"args": {"a": "maybe"}}}}],
)
def test_a_policy_typo_is_a_boot_error_naming_it(tmp_path: Path, policy: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError, match="policy"):
        load_settings(_config(tmp_path, policy))
