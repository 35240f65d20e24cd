"""Who may reach Aeon over HTTP, decided from a request's values alone (application/access), as `aeon ui` asks it."""

from __future__ import annotations

from aeon.application.access import Access, Asked, Refused, Welcome, is_loopback, loopback_hosts

LOCAL = Access(token=None, hosts=loopback_hosts("127.0.0.1", 8765), cookie="aeon_ui_8765")
REMOTE = Access(token="s3cret", hosts=None, cookie="aeon_ui_8765")


def test_a_loopback_server_refuses_a_request_naming_another_host_as_dns_rebinding_would() -> None:
    refused = LOCAL.decide(Asked(method="GET", host="evil.example:8765"))
    assert refused == Refused(421, "this aeon ui answers only to its own loopback address")
    assert LOCAL.decide(Asked(method="GET", host="localhost:8765")) is None
    assert LOCAL.decide(Asked(method="GET", host="[::1]:8765")) is None


def test_off_loopback_every_request_needs_the_token_in_the_address_a_cookie_or_a_bearer_header() -> None:
    assert isinstance(REMOTE.decide(Asked(method="GET", host="h:1")), Refused)
    assert REMOTE.decide(Asked(method="GET", host="h:1", query_token="s3cret")) == Welcome()
    assert REMOTE.decide(Asked(method="GET", host="h:1", cookie="aeon_ui_8765=s3cret")) is None
    assert REMOTE.decide(Asked(method="GET", host="h:1", authorization="Bearer s3cret")) is None
    wrong = REMOTE.decide(Asked(method="GET", host="h:1", cookie="aeon_ui_8765=guess; other=s3cret"))
    assert isinstance(wrong, Refused) and wrong.status == 401
    assert isinstance(REMOTE.decide(Asked(method="GET", host="h:1", cookie='"unclosed')), Refused)


def test_a_state_changing_request_from_another_site_is_refused_and_one_from_the_page_is_not() -> None:
    host = "127.0.0.1:8765"
    cross = LOCAL.decide(Asked(method="POST", host=host, fetch_site="cross-site"))
    assert cross == Refused(403, "refused: a request from another site may not change anything here")
    assert LOCAL.decide(Asked(method="POST", host=host, fetch_site="same-origin")) is None
    assert isinstance(LOCAL.decide(Asked(method="POST", host=host, origin="http://evil.example")), Refused)
    assert LOCAL.decide(Asked(method="POST", host=host, origin=f"http://{host}")) is None
    assert LOCAL.decide(Asked(method="GET", host=host, fetch_site="cross-site")) is None  # reading changes nothing


def test_loopback_addresses_are_told_from_others() -> None:
    assert is_loopback("localhost") and is_loopback("127.0.0.2") and is_loopback("[::1]")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.com")


def test_a_server_keeping_only_hashed_tokens_takes_any_of_them_and_none_when_it_holds_none() -> None:
    import hashlib

    digest = hashlib.sha256(b"aeon_one").hexdigest()
    kept = Access(token=None, hosts=None, cookie="aeon_serve", door="aeon serve", hashes=frozenset({digest}))
    assert kept.decide(Asked(method="GET", host="h:1", authorization="Bearer aeon_one")) is None
    assert kept.decide(Asked(method="GET", host="h:1", authorization=f"Bearer {digest}")) == Refused(
        401, "this aeon serve needs its token: open the address it printed when it started"
    )  # the hash itself is no token
    empty = Access(token=None, hosts=None, cookie="aeon_serve", hashes=frozenset())
    assert isinstance(empty.decide(Asked(method="GET", host="h:1", authorization="Bearer aeon_one")), Refused)
