"""An error code names one kind of failure: the --json document's `code` tells a script which error it got."""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict

import aeon
from aeon.domain.errors import AeonError


def _every_error() -> list[type[AeonError]]:
    for info in pkgutil.walk_packages(aeon.__path__, "aeon."):
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional extra (otel, postgres) that is not installed defines no error of ours
            continue
    todo, seen = [AeonError], []
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return seen


def test_no_two_error_classes_share_a_code():
    by_code: dict[str, list[str]] = defaultdict(list)
    for cls in _every_error():
        if "code" in vars(cls):
            by_code[cls.code].append(f"{cls.__module__}.{cls.__qualname__}")
    shared = {code: names for code, names in by_code.items() if len(names) > 1}
    assert shared == {}
