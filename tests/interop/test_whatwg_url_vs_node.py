"""``acp_runtime._whatwg_url.can_parse`` against Node's ``URL.canParse``, differentially.

Cases: a hand-written corpus of the URL Standard's hard corners (schemes, special and
non-special authorities, credentials, IPv4 numbers and the "ends in a number" rule, IPv6,
percent-decoded and Unicode hosts, ``xn--`` labels, ports, ``file:`` hosts, controls,
tabs and newlines, surrounding spaces) and hypothesis-built URL-shaped strings. Ours must
answer as Node does on every one, except the few Unicode inputs in :data:`NODE_20_QUIRKS`
where Node 20's parser (Ada 2.9) departs from UTS #46 and ours follows the standard.
"""

from __future__ import annotations

import json
import subprocess
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_runtime._whatwg_url import can_parse

from .node_peers import PEERS_DIR, JsonLinesNode, ensure_node_modules, node_executable

URL_CAN_PARSE = PEERS_DIR / "url_can_parse.mjs"

CORPUS: tuple[str, ...] = (
    # schemes
    "http://example.com", "HTTP://EXAMPLE.COM/", "hTtPs://a", "a:b", "foo:", "a+b-c.d:x",
    "1a:b", "+a:b", ":", "://x", "//x", "/x", "x", "", " ", "teleport", "mailto:x@y",
    "urn:isbn:0451450523", "data:text/plain,hi", "javascript:alert(1)", "about:blank",
    "blob:https://a/b", "é:x", "a\u00e9:x", "ht\u0131tp://x", "\u212aa:b",
    # special schemes: slashes, backslashes, empty hosts
    "http:x", "http:/x", "http:\\\\x", "http:\\/x", "http:////x", "http:", "http:/",
    "http://", "http:///", "http://?", "http://#", "http:?x", "https:#x", "ws:x", "wss://",
    "ftp://a", "ftp:", "http://\\", "http:\\\\", "http://a\\b", "foo://a\\b",
    # non-special schemes: authority, paths, opaque paths
    "foo://", "foo:///", "foo:////x", "foo://x", "foo:/x", "foo:x y", "foo://a b",
    "foo://a%20b", "foo://a<b", "foo://a>b", "foo://a^b", "foo://a|b", "foo://a]b",
    "foo://a[b", "foo://%", "foo://%zz", "foo://\u00e9", "foo://a:1", "foo://:1",
    "foo://a:x", "foo://a:99999", "foo://a:65535", "foo://[::1]", "foo://[x]",
    "foo://a@b", "foo://@", "foo://a@", "foo://a@/x", "foo://@b", "foo://a\x00b",
    "foo://a\x01b", "foo://a\x7fb", "foo://\u3002", "foo://a{b}", "foo://a\"b",
    # credentials
    "http://user:pass@host", "http://user@host", "http://@host", "http://@@host",
    "http://a@b@c", "http://a:b:c@d", "http://user@", "http://user@/x", "http://user:@h",
    "http://:@h", "http://@", "http://a@:80", "http://u@[::1]", "http://a@b:80@c",
    "http://a@b/c@d", "http://a b@c", "http://a%40b@c",
    # domains: forbidden code points
    "http://a b", "http://a<b", "http://a>b", "http://a^b", "http://a|b", "http://a%b",
    "http://a%", "http://a%2", "http://a%zz", "http://a#b", "http://a?b", "http://a[b",
    "http://a]b", "http://a\x00b", "http://a\x01b", "http://a\x1fb", "http://a\x7fb",
    "http://a\"b", "http://a`b", "http://a{b}", "http://a'b", "http://a(b)", "http://a*b",
    "http://a!b", "http://a$b", "http://a&b", "http://a+b", "http://a,b", "http://a;b",
    "http://a=b", "http://a~b", "http://a_b", "http://-a-", "http://a..b", "http://.",
    "http://..", "http://.a", "http://a.", "http://A.B.C", "http://a:b",
    # domains: percent-decoding
    "http://%41.com", "http://ex%00ample", "http://ex%20ample", "http://ex%2Fample",
    "http://%2e", "http://%2E%2E", "http://a%2ecom", "http://%25", "http://%2525",
    "http://%41%42", "http://%C3%A9", "http://%c3%a9.com", "http://%C3", "http://%80",
    "http://%FF", "http://%EF%BB%BFa", "http://%E2%80%8B", "http://%30", "http://%30x1",
    "http://%E3%80%82", "http://%F0%9F%98%80",
    # domains: IPv4 numbers and "ends in a number"
    "http://1.2.3.4", "http://1.2.3.4.5", "http://1.2.3.4.", "http://1.2.3.4..",
    "http://0x7f.1", "http://0x7F.0.0.1", "http://0X7f.1", "http://0x", "http://0x.0x",
    "http://0xg", "http://a.0x", "http://a.0x1", "http://a.0xg", "http://0xffffffff",
    "http://0x100000000", "http://4294967295", "http://4294967296", "http://999999999999",
    "http://256", "http://1.256", "http://1.65536", "http://1.2.65536", "http://1.1.1.256",
    "http://256.1", "http://09", "http://08", "http://07", "http://0", "http://00",
    "http://0.0.0.0", "http://1..2", "http://1.2.3", "http://a.1", "http://1.a",
    "http://a.09", "http://a.1.", "http://1a", "http://0x1.0x2.0x3.0x4", "http://017700000001",
    "http://1.2.3.09", "http://-1", "http://+1", "http://1e3", "http://%31.%32",
    "http://\uff11.\uff12.\uff13.\uff14", "http://0x1g.a", "http://1.2.3.4:80", "http://localhost",
    "http://123.com", "http://1.2.3.com", "http://0xa.com", "http://com.0xa",
    # IPv6
    "http://[::1]", "http://[::]", "http://[:]", "http://[:::]", "http://[1::]",
    "http://[::1:]", "http://[1:2:3:4:5:6:7:8]", "http://[1:2:3:4:5:6:7:8:9]",
    "http://[1:2:3:4:5:6:7]", "http://[1::2::3]", "http://[12345::]", "http://[1:2:3:4:5:6:7::]",
    "http://[::1.2.3.4]", "http://[::ffff:1.2.3.4]", "http://[1:2:3:4:5:6:1.2.3.4]",
    "http://[1:2:3:4:5:6:7:1.2.3.4]", "http://[::1.2.3]", "http://[::1.2.3.4.5]",
    "http://[::1.2.3.256]", "http://[::01.2.3.4]", "http://[::0.2.3.4]", "http://[::.1.2.3]",
    "http://[::1.2.3.]", "http://[::1.2..4]", "http://[::a.2.3.4]", "http://[::1.2.3.4x]",
    "http://[::1]:80", "http://[::1]:", "http://[::1]x", "http://[::1]]", "http://[[::1]]",
    "http://[::1", "http://::1]", "http://[]", "http://[", "http://]", "http://[x]",
    "http://[::%31]", "http://[::1%25eth0]", "http://[0:0:0:0:0:0:0:1]", "http://[FFFF::]",
    "http://[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]", "http://[g::]", "http://[::1]/x",
    "http://[::1]?x", "http://[::1]#x", "http://x[::1]", "http://[::1]@x", "http://[1:2::3:4]",
    "http://[:1]", "http://[1:]", "http://[::\uff11]",
    # ports
    "http://a:0", "http://a:80", "http://a:65535", "http://a:65536", "http://a:000000080",
    "http://a:99999999999999999999", "http://a:", "http://a:/", "http://a:x", "http://a:8x",
    "http://a:-1", "http://a:+1", "http://a: 1", "http://a:1 ", "http://a:\uff11", "http://:80",
    "http://:", "http://a::80", "http://a:80:80", "http://a:80@b", "http://a:\\",
    # file URLs
    "file:///x", "file://", "file:", "file:x", "file:/x", "file:\\\\x\\y", "file://host/x",
    "file://localhost/x", "file://LOCALHOST/", "file://C:/x", "file://c|/x", "file://C:",
    "file://CC:/x", "file://1:/x", "file://a b/x", "file://a:80/x", "file://u@h/x",
    "file://[::1]/x", "file://[x]/x", "file://1.2.3.4.5/x", "file://%41/", "file://%00/",
    "file://\u00e9/", "file://h?x", "file://h#x", "file:////x", "FILE://H/",
    # controls, tabs, newlines, spaces
    " http://a ", "\thttp://a\t", "\nhttp://a\n", "\x00http://a\x00", "\x1fhttp://a\x1f",
    "\x7fhttp://a", "http://a\x7f", "\u00a0http://a", "http://a\u00a0", "\ufeffhttp://a",
    "ht\ttp://a", "http:\t//a", "http://a\tb", "http://a\nb", "http://a\rb", "http://\ta",
    "http://a:8\t0", "http://[::\n1]", "h\nt\rt\tp://x", "http://a\x0bb", "http://a\x0cb",
    "http://a\x0b", "\x0bhttp://a", "http://a b/", "http://a/ b", "http://a/b c",
    "http://a?b c", "http://a#b c", "foo:a b", "http://a\u2028b", "http://a\u3000b",
    # Unicode hosts: mapping, deviations, ignored code points, full stops
    "http://\u00e9.com", "http://\u00c9.COM", "http://b\u00fccher.de", "http://\u00df.de",
    "http://\u03c2.gr", "http://\u1e9e.de", "http://\u4e2d\u6587.cn", "http://\uff21\uff22",
    "http://a\u3002b", "http://a\uff0eb", "http://a\uff61b", "http://a\u2024b",
    "http://a\u00adb", "http://\u00ad", "http://a\u200bb", "http://\u200b", "http://a\u2060b",
    "http://a\ufe0fb", "http://a\ufffdb", "http://a\ufffcb", "http://a\u2028b",
    "http://a\u00a0b", "http://a\u3000b", "http://a\u2488b", "http://\u2474", "http://\u00bd",
    "http://\u2100", "http://\uff03", "http://\uff0f", "http://a\u0301", "http://\u0301a",
    "http://a\u0080b", "http://a\u200eb", "http://a\ue000b", "http://a\U000f0000b",
    "http://a\U0010fffdb", "http://\U0001f600", "http://\u2603.net", "http://\u00b2",
    "http://\u00b9.\u00b2.\u00b3.4", "http://\uff10x7f.1", "http://a\u10a0b",
    "http://a\u2d00b", "http://\u13a0", "http://\uab70", "http://\u0130", "http://\ufb01",
    "http://\u2126", "http://\u212b", "http://\u0345", "http://a\u0345", "http://a\u115fb",
    "http://\u3164", "http://a\u17b4b", "http://\u1806", "http://\u2ff0", "http://\u33c2",
    "http://a\u0340b", "http://\u0390", "http://\u1fd3", "http://\u00e9\u0301",
    "http://e\u0301", "http://\u0065\u0301.com", "foo://\u00e9", "foo://\ufffd",
    "http://\uff41\uff42\uff43.\uff43\uff4f\uff4d", "http://\u2460", "http://a.\u2460",
    # right-to-left labels and joiners
    "http://\u05d0", "http://\u05d0\u05d1", "http://\u05d0.com", "http://a.\u05d0",
    "http://\u05d01", "http://\u05d0\u0661", "http://\u05d01\u0661", "http://\u0627\u0661",
    "http://\u05d0a", "http://\u05d0a\u05d1", "http://a\u05d0b", "http://\u05d0-\u05d1",
    "http://\u05d0\u05b7", "http://\u05d0\u0300", "http://\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
    "http://\u05d0.\u05d1", "http://\u05d0\u200e", "http://\u0915\u094d\u200d\u0937",
    "http://\u0915\u094d\u200c\u0937", "http://a\u200db", "http://a\u200cb", "http://\u200c",
    "http://\u0628\u200c", "http://\u05d0\u00b7",
    # code points whose properties changed after Unicode 13.0 (Python 3.10's unicodedata):
    # judged by Unicode 15.1 on every Python (acp_runtime._unicode_props)
    "http://\U0001fae8.com", "http://a\u0cf3b", "http://\U0001e4d0", "http://\U00031350.cn",
    "http://a\U00011f00", "http://\U00013439", "http://\U0001fae0.com", "http://\u2c2f.com",
    "http://\ua7c0", "http://\U0001e030.com", "http://\u0870", "http://\u0870.com",
    "http://\U00010f70", "http://e\u1ac3\u0301", "http://xn--9ca053k", "http://xn--e-xbb953p",
    "http://xn--a-xbb23218a", "http://xn--a-xbb33218a", "http://\u0890", "http://a\u0890",
    "http://\U0001fa77", "http://\U0001cf50", "http://\u2ffc", "http://\u31ef",
    "http://a\u1734", "http://\u1734",
    # xn-- labels
    "http://xn--nxasmq6b", "http://xn--nxasmq6b.com", "http://XN--NXASMQ6B", "http://xn--",
    "http://xn--a", "http://xn--abc-", "http://xn---", "http://xn--zz", "http://xn--9",
    "http://xn--ls8h", "http://xn--n3h.net", "http://xn--mnchen-3ya.de", "http://xn--Mnchen-3ya.de",
    "http://xn--mnchen-3yA.de", "http://xn--bcher-kva.xn--", "http://a.xn--", "http://xn--a-",
    "http://xn--a.xn--nxasmq6b", "http://xn--zca", "http://xn--0ca", "http://xn--ssa",
    "http://xn--1ca", "http://xn--ca", "http://xn--bcher-KVA", "http://xn--e1afmkfd",
    "http://xn--80ak6aa92e", "http://xn--4gbrim", "http://xn--ngbrx", "http://xn--1-",
    "http://xn--99999999999999", "http://xn--zzzzzzzzzzzzzzzzzz", "http://xn--4ca0bs",
    "http://xn--\u00e9", "http://\u00e9.xn--nxasmq6b", "http://xn--nxasmq6b.\u00e9",
    "http://xn--1ug", "http://xn--1ug6928a", "http://xn--ls8h.xn--n3h", "http://xn--w9a",
    "http://xn--0ug", "http://xn--a-ecp.ru", "http://xn--mnchen-3ya%2ede", "http://x%6e--nxasmq6b",
    "http://xn--nxasmq6b%2E", "http://Xn--nxasmq6b", "http://xN--nxasmq6b", "foo://xn--a",
    "http://xn--e-ufa", "http://xn--9ca", "http://xn--fa-hia.de", "http://xn--zca.de",
    "http://xn--7ca", "http://xn--rhq", "http://xn--abcdefghij", "http://xn--hxa",
)  # fmt: skip

NODE_20_QUIRKS: dict[str, bool] = {
    # Node 20's Ada 2.9 checks a right-to-left label's first character loosely: a label
    # that starts with a digit (EN or AN) and has an R or AL character passes there;
    # UTS #46 (RFC 5893 rule 1) refuses it, as newer Ada releases and this module do.
    "http://\u0661": False,
    "http://1\u05d0": False,
    # It checks the characters of a label that starts L except its last one: "a" then
    # an R character passes there; RFC 5893 rule 5 refuses it.
    "http://a\u05d0": False,
    # Its bidi, combining-mark and virama tables predate Unicode 14: it takes U+10F70 (an
    # R letter since 14.0) for L, a mark added in 14.0 or 15.0 as a letter that may start
    # a label, and no joiner after U+1715 (a virama since 14.0).
    "http://\U00010f70\u05d0": True,
    "http://a\U00010f70": False,
    "http://\u1ac3": False,
    "http://\U00011f00": False,
    "http://\u1703\u1715\u200d\u1703": True,
    # Its mapping table is Unicode 15.0, without the CJK Extension I of 15.1.
    "http://\U0002ebf0.cn": True,
}
"""Inputs where Node 20 (Ada 2.9.2) departs from the URL Standard and ``can_parse``
follows the standard; ``can_parse``'s answer is asserted, Node's is not compared."""


def _node_answers(inputs: list[str]) -> list[bool]:
    node = node_executable()
    assert node is not None
    done = subprocess.run(
        [node, str(URL_CAN_PARSE)],
        input="".join(json.dumps(text) + "\n" for text in inputs),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture(scope="module")
def node_ready() -> None:
    if node_executable() is None:
        pytest.skip("node is not installed")
    ensure_node_modules()


def test_the_corpus_is_parsed_as_node_parses_it(node_ready: None) -> None:
    inputs = list(dict.fromkeys(CORPUS))
    answers = _node_answers(inputs)
    assert len(answers) == len(inputs)
    disagreements = [
        f"{text!r}: node {node}, ours {can_parse(text)}"
        for text, node in zip(inputs, answers, strict=True)
        if can_parse(text) != node
    ]
    assert disagreements == [], "\n".join(disagreements)
    refused = answers.count(False)
    assert 100 < refused < len(inputs) - 100  # the corpus tests both answers


def test_where_node_20_departs_from_the_standard_ours_follows_the_standard() -> None:
    assert {text: can_parse(text) for text in NODE_20_QUIRKS} == NODE_20_QUIRKS


# -- hypothesis: URL-shaped strings, one long-lived Node process -----------------------------


@cache
def _node_process() -> JsonLinesNode:
    """``url_can_parse.mjs``: a JSON string in, ``URL.canParse`` of it out."""
    return JsonLinesNode(URL_CAN_PARSE)


_LABEL_PIECES = st.sampled_from(
    [
        *"abcxyzABCXYZ0123456789", *["example", "com", "localhost", "0x", "0X", "09", "255"],
        *["-", "_", "~", "!", "xn--", "XN--", "nxasmq6b", "n3h", "mnchen-3ya", "zca", "%41"],
        *["%2e", "%00", "%20", "%25", "%C3%A9", "%zz", "%", " ", "\t", "\n", "\x00", "\x7f"],
        *["^", "|", "<", "[", "]", "\\", "@", "#", "?", "\u00e9", "\u00c9", "\u00df", "\u03c2"],
        *["\u4e2d", "\uff21", "\uff10", "\u3002", "\uff0e", "\u00ad", "\u200b", "\ufffd"],
        *["\u2603", "\u0301", "\u00b2", "\u2488", "\u0130", "\u10a0", "\u00a0"],
    ]
)  # fmt: skip
"""Pieces of a domain label: mostly what a label holds, now and then what breaks one."""

_CLEAN_PIECES = st.sampled_from(["a", "z", "Q", "0", "9", "-", "example", "com", "xn--zca"])

_NUMBERS = st.sampled_from(
    ["0", "1", "7", "08", "010", "255", "256", "0x", "0xff", "0X100", "65535", "65536",
     "16777216", "4294967295", "4294967296", "0x1g", "", "a"]
)  # fmt: skip

_GROUPS = st.sampled_from(["0", "1", "ff", "ffff", "FFFF", "12345", "g", "", "1.2.3.4", "01.2"])


@st.composite
def _host(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(["domain", "domain", "domain", "ipv4", "ipv6", "empty"]))
    if shape == "domain":
        pieces = st.one_of(_CLEAN_PIECES, _CLEAN_PIECES, _LABEL_PIECES)
        labels = draw(st.lists(st.lists(pieces, min_size=1, max_size=3), max_size=4))
        return ".".join("".join(label) for label in labels) + draw(st.sampled_from(["", "", "."]))
    if shape == "ipv4":
        return ".".join(draw(st.lists(_NUMBERS, min_size=1, max_size=5))) + draw(
            st.sampled_from(["", "", "."])
        )
    if shape == "ipv6":
        groups = draw(st.lists(_GROUPS, min_size=1, max_size=9))
        cut = draw(st.integers(0, len(groups)))
        compress = draw(st.sampled_from(["", ":", "::", ":::"]))
        body = ":".join(groups[:cut]) + compress + ":".join(groups[cut:])
        return "[" + body + draw(st.sampled_from(["]", "]", "]", ""]))
    return ""


@st.composite
def _url_shaped(draw: st.DrawFn) -> str:
    """A URL built from parts that are mostly valid, so both answers come often."""
    scheme = draw(
        st.sampled_from(["http", "http", "HTTPS", "ws", "ftp", "file", "file", "foo", "a+b", "1a"])
    )
    slashes = draw(st.sampled_from(["://", "://", "://", ":", ":/", ":///", ":\\\\", "//"]))
    userinfo = draw(st.sampled_from(["", "", "", "", "user@", "user:pass@", "@", "a@b@"]))
    port = draw(st.sampled_from(["", "", "", "", "", ":", ":80", ":65535", ":65536", ":0x1"]))
    tail = draw(st.sampled_from(["", "", "/", "/a b", "?q", "#f", "\\x", "/%zz", "?\u00e9"]))
    edge = st.sampled_from(["", "", "", "", " ", "\t", "\n", "\x00", "\u00a0", "\ufeff"])
    return draw(edge) + scheme + slashes + userinfo + draw(_host()) + port + tail + draw(edge)


@settings(
    max_examples=2000,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,  # the same examples on every run: CI stays reproducible
)
@given(text=_url_shaped())
def test_url_shaped_strings_are_parsed_as_node_parses_them(node_ready: None, text: str) -> None:
    assert can_parse(text) == _node_process().ask(text), ascii(text)
