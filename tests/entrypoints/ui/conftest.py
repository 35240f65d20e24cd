"""One folder of real recorded runs shared by the `aeon ui` tests (making them takes about half a minute)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ui_harness import Recorded, fill


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    folder: Path = tmp_path_factory.mktemp("ui-runs")
    return fill(folder)
