"""docs/requirements.md, the requirement → module → test map, is complete and points at things that exist.

The specifications are not part of the repository: AEON_SPEC_DIR names their folder. Without it the completeness check
is skipped; the checks of modules, tests and stray FR numbers need only the repository.
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "requirements.md"
SPEC = Path(os.environ.get("AEON_SPEC_DIR") or "/nonexistent")  # where the specification documents are
DOCUMENTS = {
    "01": "01-sprint1-core.spec.md",
    "02": "02-sprint2-adaptive-reasoning.spec.md",
    "05": "05-sprint6-phase-transitions.spec.md",
}
# A requirement is defined by a list item "- **FR-012**: ..." (FR-NEW-001, FR-030a too); mentions elsewhere are not.
DEFINITION = re.compile(r"^\s*-\s+\*\*(FR-(?:NEW-)?\d+[a-z]?)\*\*", re.MULTILINE)
ROW_ID = re.compile(r"^(\d\d) (FR-(?:NEW-)?\d+[a-z]?)$")
MODULE = re.compile(r"`(src/aeon/[^`\s]+\.py)`(?: `([\w.]+)`)?")
NODE_ID = re.compile(r"`(tests/[^`\s]+\.py)::(\w+)`")
FR_NUMBER = re.compile(r"FR-\d|FR-NEW")


def rows() -> list[tuple[str, str]]:
    """(requirement id, whole row) for every table row whose first cell is a requirement id."""
    out = []
    for line in MAP.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            continue
        first = line.strip("|").split("|")[0].strip()
        if ROW_ID.match(first):
            out.append((first, line))
    return out


@cache
def defined_names(path: Path) -> frozenset[str]:
    """Top-level functions, classes and assignments, and `Class.member` for members of top-level classes."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(f"{node.name}.{member.name}")
                elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                    names.add(f"{node.name}.{member.target.id}")
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)


def test_the_map_has_rows() -> None:
    assert len(rows()) > 100, f"{MAP} has only {len(rows())} requirement rows"


@pytest.mark.skipif(not SPEC.is_dir(), reason="AEON_SPEC_DIR names no folder of specifications")
def test_every_requirement_of_documents_01_02_05_has_exactly_one_row() -> None:
    wanted = {f"{doc} {fr}" for doc, name in DOCUMENTS.items() for fr in DEFINITION.findall((SPEC / name).read_text())}
    assert len(wanted) > 100, "the requirement definitions were not found in the specifications"
    counts = Counter(rid for rid, _ in rows())
    missing = sorted(wanted - counts.keys())
    assert not missing, f"requirements without a row in docs/requirements.md: {', '.join(missing)}"
    repeated = sorted(rid for rid, n in counts.items() if n > 1)
    assert not repeated, f"requirements with more than one row: {', '.join(repeated)}"
    unknown = sorted(counts.keys() - wanted)
    assert not unknown, f"rows for requirements the specifications do not define: {', '.join(unknown)}"


def test_every_module_named_exists_with_its_symbol() -> None:
    problems = []
    for rid, line in rows():
        for path, symbol in MODULE.findall(line):
            file = ROOT / path
            if not file.is_file():
                problems.append(f"{rid}: module {path} does not exist")
            elif symbol and symbol not in defined_names(file):
                problems.append(f"{rid}: {path} defines no {symbol}")
    assert not problems, "\n".join(problems)


def test_every_test_named_exists() -> None:
    problems = []
    named = 0
    for rid, line in rows():
        for path, name in NODE_ID.findall(line):
            named += 1
            file = ROOT / path
            if not file.is_file():
                problems.append(f"{rid}: test file {path} does not exist")
            elif name not in defined_names(file):
                problems.append(f"{rid}: {path} defines no {name}")
    assert named > 100, f"only {named} test node ids found in {MAP}"
    assert not problems, "\n".join(problems)


def test_rows_without_a_test_say_so() -> None:
    silent = [rid for rid, line in rows() if not NODE_ID.search(line) and "no test" not in line]
    assert not silent, f"rows naming no test and not saying 'no test': {', '.join(silent)}"


def test_no_fr_number_is_written_in_src_or_tests() -> None:
    me = Path(__file__).resolve()
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for folder in ("src", "tests")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.resolve() != me
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FR_NUMBER.search(line)
    ]
    assert not found, "FR numbers belong in docs/requirements.md only:\n" + "\n".join(found)
