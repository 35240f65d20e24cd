"""One `aeon serve` over the scripted demo config, shared by the tests of a module (starting one takes seconds)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_harness import CONFIG, Server, start


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder: Path = tmp_path_factory.mktemp("serve")
    server = start(folder, "--config", CONFIG / "scripted-demo.yaml")
    yield server
    server.stop()
