"""``format: uri`` strings are checked as the TypeScript SDK's zod checks them (``z.url()``:
JavaScript ``trim``, the WHATWG URL parser, tabs and newlines removed from what is kept),
so a value zod refuses is refused here, or salvaged where the schema says. Issue #14's
named cases; the differential tests against Node are in tests/interop
(``test_whatwg_url_vs_node.py``, ``test_lenient_parity.py``)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from acp_generated import v1, v2
from acp_generated.v1 import unstable as v1u
from acp_generated.v2 import unstable as v2u
from acp_runtime._lenient import Salvage
from acp_runtime._uri_format import PLAIN_URI, zod_url
from acp_runtime._whatwg_url import can_parse
from acp_runtime.codegen_support import UriFormat


def _wire(model: Any) -> Any:
    return model.model_dump(mode="json", exclude_unset=True)


def _link(uri: str, **extra: Any) -> dict[str, Any]:
    return {"type": "resource_link", "name": "a", "uri": uri, **extra}


def test_an_icon_src_zod_refuses_is_dropped_from_the_icons_list() -> None:
    """``icons`` skips invalid items: an icon whose ``src`` is "teleport" goes, as in zod."""
    link = _link("file:///a.py", icons=[{"src": "teleport"}, {"src": "https://a.example/i.png"}])
    parsed = v2.ResourceLink.model_validate_lenient(link)
    assert _wire(parsed)["icons"] == [{"src": "https://a.example/i.png"}]
    assert parsed.salvaged == (Salvage(("icons", 0), "url_parsing", "dropped"),)


def test_an_image_uri_zod_refuses_leaves_the_default_on_error_field_absent() -> None:
    image = {"type": "image", "data": "AA==", "mimeType": "image/png", "uri": "http://a b"}
    parsed = v2.ImageContent.model_validate_lenient(image)
    assert "uri" not in _wire(parsed)
    assert parsed.salvaged == (Salvage(("uri",), "url_parsing", "default"),)


def test_a_resource_link_uri_zod_refuses_is_refused_strictly_and_leniently() -> None:
    """``ResourceLink.uri`` is required and unmarked: no salvage, the prompt is refused."""
    prompt = {"sessionId": "s", "prompt": [_link("teleport")]}
    for parse in (v2.PromptRequest.model_validate, v2.PromptRequest.model_validate_lenient):
        with pytest.raises(ValidationError) as refused:
            parse(prompt)
        errors = {e["type"]: e["loc"] for e in refused.value.errors()}
        assert errors["url_parsing"][:2] == ("prompt", 0)
        assert errors["url_parsing"][-2:] == ("resource_link", "uri")


def test_the_kept_value_is_what_zod_keeps_trimmed_without_tabs_and_newlines() -> None:
    parsed = v2.ResourceLink.model_validate(_link("\u3000 https://exa\tmple.com/a\n.py\r "))
    assert parsed.uri == "https://example.com/a.py"
    # JavaScript's trim keeps C0 controls (the URL parser then ignores them at the edges)
    assert v2.ResourceLink.model_validate(_link("\x00file:///x")).uri == "\x00file:///x"


def test_the_check_runs_from_json_text_too() -> None:
    with pytest.raises(ValidationError, match="url_parsing"):
        v2.ResourceLink.model_validate_json(b'{"name":"a","uri":"http://[::1"}')
    image = b'{"type":"image","data":"","mimeType":"image/png","uri":"http:"}'
    assert v2.ImageContent.model_validate_json_lenient(image).uri is None


def test_every_generated_package_checks_its_uri_strings() -> None:
    """v1 has one ``format: uri`` string (an elicitation's ``url``); v2 has several."""
    bad_mode = {"sessionId": "s", "elicitationId": "e", "url": "not a url", "message": "m"}
    for package in (v1, v1u):
        with pytest.raises(ValidationError, match="url_parsing"):
            package.SessionElicitationUrlMode.model_validate(bad_mode)
        good = package.SessionElicitationUrlMode.model_validate({**bad_mode, "url": "https://a/"})
        assert good.url == "https://a/"
    for package in (v2, v2u):
        with pytest.raises(ValidationError, match="url_parsing"):
            package.McpServerHttp.model_validate({"name": "m", "url": "//localhost:8080"})
        # a scheme and an opaque path: the URL parser takes it, as zod does
        assert package.McpServerHttp.model_validate({"name": "m", "url": "localhost:8080"})
    assert v2u.PlanFile.model_fields["uri"].metadata[-1] is UriFormat


def test_only_uri_strings_are_checked() -> None:
    """v1's ``ResourceLink.uri`` has no ``format: uri``: zod takes any string, so do we."""
    assert v1.ResourceLink.model_validate(_link("teleport")).uri == "teleport"


def test_non_strings_are_refused_as_urls() -> None:
    with pytest.raises(ValidationError) as refused:
        v2.Icon.model_validate({"src": 12345})
    assert refused.value.errors()[0]["type"] == "url_parsing"


def test_the_json_schema_says_format_uri() -> None:
    props = v2.ImageContent.model_json_schema()["properties"]
    assert props["uri"]["anyOf"] == [{"type": "string", "format": "uri"}, {"type": "null"}]
    assert v2.Icon.model_json_schema()["properties"]["src"]["format"] == "uri"


@pytest.mark.parametrize(
    ("url", "parses"),
    [
        ("http://a b", False),
        ("http:x", True),
        ("http://[::1]", True),
        ("http://1.2.3.4.5", False),
        ("http://0x7f.1", True),
        ("http://999999999999", False),
        ("http://a:65536", False),
        ("file:///x", True),
        ("foo:", True),
        ("a:b", True),
        ("//x", False),
        ("http://%41.com", True),
        ("http://ex%00ample", False),
        ("http://b\u00fccher.de", True),
        ("http://xn--a", False),
        ("teleport", False),
    ],
)
def test_can_parse_the_classics(url: str, parses: bool) -> None:
    """A few of the corpus's cases, so the parser is tested where Node is not installed."""
    assert can_parse(url) is parses


_PLAIN = re.compile(PLAIN_URI)


@given(
    st.from_regex(_PLAIN, fullmatch=True)
    | st.builds(lambda host, rest: f"https://{host}{rest}", st.text(), st.text())
)
def test_what_the_native_pattern_takes_the_parser_takes_unchanged(url: str) -> None:
    """The pattern pydantic-core checks without a Python call is a shortcut, not a second
    opinion: every string it takes, the URL parser takes, and zod keeps as it is."""
    if _PLAIN.fullmatch(url):
        assert can_parse(url)
        assert zod_url(url) == url
