"""Labels join as provenance does: trusted only if every part is, from the union of their sources; TRUSTED changes
nothing it joins."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aeon.domain.provenance import TRUSTED, Effect, Label, consequential

labels = st.builds(
    lambda trusted, sources: Label(trusted=trusted, sources=tuple(sorted(set(sources)))),
    st.booleans(),
    st.lists(st.sampled_from(["tool:a", "tool:b", "mcp:s/c"]), max_size=3),
)


@given(labels, labels, labels)
def test_join_is_trusted_only_if_both_are_and_keeps_every_source(a: Label, b: Label, c: Label) -> None:
    joined = a.join(b)
    assert joined.trusted == (a.trusted and b.trusted)
    assert set(joined.sources) == set(a.sources) | set(b.sources) and list(joined.sources) == sorted(joined.sources)
    assert a.join(b) == b.join(a) and a.join(b).join(c) == a.join(b.join(c)) and a.join(a) == a
    assert a.join(TRUSTED) == a == TRUSTED.join(a)


def test_an_undeclared_effect_counts_as_consequential_like_write_and_external() -> None:
    assert [e for e in Effect if consequential(e)] == [Effect.WRITE, Effect.EXTERNAL] and consequential(None)
    assert Label.of("tool:x", trusted=False).shown() == "untrusted (from tool:x)" and TRUSTED.shown() == "trusted"
