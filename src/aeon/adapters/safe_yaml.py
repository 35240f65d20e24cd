"""YAML for untrusted files: no anchors or aliases, no duplicate keys, nesting bounded while the tree is built."""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import Composer
from yaml.nodes import MappingNode, Node, ScalarNode

# libyaml scans and parses in C when it is there; the composition stays in Python so that every node passes the
# checks below. The pure-Python parser is the fallback (about four times slower on a 1 MiB file).
_Parser: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"
MAX_DEPTH = 100  # levels of nesting; plan args need a handful, the kernel walks values recursively


class YamlRefused(yaml.YAMLError):
    """A YAML construct the loader refuses, with the 1-based line it starts on."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class BoundedSafeLoader(Composer, _Parser):  # type: ignore[misc]
    """A safe loader whose composer refuses anchors and aliases (an alias expands to a copy of its anchor wherever
    the data is later walked, so ten lines can stand for 10⁹ nodes), refuses a mapping that repeats a key (the last
    one would win unseen) and stops at `max_depth` levels (deeper input is refused, never a RecursionError)."""

    def __init__(self, text: str, max_depth: int = MAX_DEPTH) -> None:
        _Parser.__init__(self, text)
        Composer.__init__(self)  # the Python composer, ahead of libyaml's in the MRO
        self._max_depth, self._depth = max_depth, 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent):
            raise YamlRefused(f"alias *{event.anchor} refused: anchors and aliases are not accepted", line)
        if getattr(event, "anchor", None) is not None:
            raise YamlRefused(f"anchor &{event.anchor} refused: anchors and aliases are not accepted", line)
        if self._depth >= self._max_depth:
            raise YamlRefused(f"nested deeper than {self._max_depth} levels", line)
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        return node

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            first: dict[Any, int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE:
                    continue  # a collection as key is refused by PyYAML itself (unhashable)
                key = self.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in first:
                    raise YamlRefused(f"duplicate key {key!r} (first at line {first[key]})", line)
                first[key] = line
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def load_yaml(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """The one document in `text`. Raises YamlRefused for what the loader refuses, yaml.YAMLError for bad syntax."""
    loader = BoundedSafeLoader(text, max_depth)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
