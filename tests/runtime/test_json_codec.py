"""``jsonrpc.encode``/``decode`` take shortcuts into the stdlib's C codec; they must say
exactly what ``json.dumps``/``json.loads`` say (strict: no NaN, UTF-8, compact)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_runtime.jsonrpc import decode, encode

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
