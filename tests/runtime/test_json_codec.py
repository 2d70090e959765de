"""``jsonrpc.encode``/``decode`` take shortcuts into the stdlib's C codec; they must say
exactly what ``json.dumps``/``json.loads`` say (strict: no NaN, UTF-8, compact)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_runtime._jsonrpc import LARGE_MESSAGE_BYTES, decode, encode

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def stdlib_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@given(st.dictionaries(st.text(), json_values, max_size=5))
def test_encode_matches_json_dumps_and_decode_reads_it_back(message: dict[str, Any]) -> None:
    try:
        expected = stdlib_text(message).encode()
    except UnicodeEncodeError:  # lone surrogates: sent ASCII-escaped instead
        expected = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
    assert encode(message) == expected
    assert decode(expected) == json.loads(expected)


@pytest.mark.parametrize("text", [b' {"a":1}', b'{"a":1} ', b"\t[1, 2]\r\n", b"7", b'"x"', b"[]"])
def test_decode_accepts_surrounding_white_space_like_json_loads(text: bytes) -> None:
    assert decode(text) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [b"", b" ", b'{"a":1} x', b'{"a":1}{}', b"{", b"NaN", b"[Infinity]", b"\xff", b"[1,]"],
)
def test_decode_refuses_what_is_not_one_strict_json_text(text: bytes) -> None:
    with pytest.raises(ValueError):
        decode(text)


def test_decode_reports_nesting_too_deep_as_a_value_error() -> None:
    with pytest.raises(ValueError):
        decode(b"[" * 100_000 + b"]" * 100_000)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_encode_refuses_non_finite_numbers(bad: float) -> None:
    with pytest.raises(ValueError):
        encode({"x": bad})


def test_encode_refuses_cycles_and_non_json_types() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(ValueError):
        encode(cycle)
    with pytest.raises(TypeError):
        encode({"x": object()})  # type: ignore[dict-item]


# --- large messages: parsed from their bytes, same verdicts and values -------------------

EDGE_TEXTS = [
    # What pydantic-core's parser refuses and the text parser takes: lone surrogates,
    # nesting past 200 levels, long numbers.
    b'"\\ud800"',
    b'"\\udc00x"',
    b'["\\ud800\\u0041"]',
    b'"\\ud800\\ud800"',
    b"[" * 300 + b"]" * 300,
    b"1." + b"0" * 5000,
    b"1" * 5000 + b".0",
    # Where both must agree anyway.
    b'"\\ud83d\\ude00"',
    b"[" * 5000 + b"]" * 5000,
    b"1" * 4300,
    b"1" * 4301,
    b"1e400",
    b"-0.0",
    b"-0",
    b"01",
    b"1.",
    b".5",
    b"+1",
    b"NaN",
    b"-Infinity",
    b'{"a":1,"b":2,"a":3}',
    b'"\xed\xa0\x80"',
    b'"\xc0\x80"',
    b'"\x7f"',
    b'"\\u12"',
]

json_texts = st.one_of(
    st.tuples(json_values, st.booleans()).map(
        lambda case: json.dumps(case[0], ensure_ascii=case[1]).encode(errors="surrogatepass")
    ),
    st.sampled_from(EDGE_TEXTS),
)


@st.composite
def mutated_texts(draw: st.DrawFn) -> bytes:
    text = draw(json_texts)
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        piece = draw(st.sampled_from([b"", b'"', b"\\", b"{", b"]", b",", b":", b"0", b"e"]))
        cut = draw(st.integers(0, 1))
        text = text[:at] + piece + text[at + cut :]
    return text


def verdict(parse: Any, data: bytes) -> tuple[str, str]:
    """What ``parse`` says about ``data``, exactly (``1`` vs ``1.0``, ``-0.0``, key order)."""
    try:
        value = parse(data)
    except ValueError:
        return ("refused", "")
    return ("accepted", json.dumps(value))


def assert_large_as_small(text: bytes) -> None:
    padding = b" " * LARGE_MESSAGE_BYTES  # white space JSON allows: now a large message
    expected = verdict(decode, text)
    assert verdict(decode, padding + text) == expected
    assert verdict(decode, text + padding) == expected


@pytest.mark.parametrize("text", EDGE_TEXTS)
def test_a_large_message_gets_the_verdict_the_text_parser_gives_at_the_edges(text: bytes) -> None:
    assert_large_as_small(text)


@given(mutated_texts())
def test_a_large_message_gets_the_verdict_and_value_the_text_parser_gives(text: bytes) -> None:
    assert_large_as_small(text)


def test_a_bad_large_message_is_refused_without_decoding_its_text() -> None:
    import tracemalloc

    line = b'{"jsonrpc":"2.0","id":1,"method":"m","params":["' + b"x" * (16 * 2**20)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError):
            decode(line)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"peak {peak} bytes"  # its text alone would be 16 MiB
