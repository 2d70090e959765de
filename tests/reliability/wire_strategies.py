"""Hostile wire input: hypothesis strategies seeded with real ACP messages.

The seed corpus is every message of the captured TypeScript SDK transcripts
(``tests/corpus/transcripts``); strategies truncate, corrupt and re-envelope those, and
add random bytes, deep nesting, over-limit lines, batches, ids of every JSON type,
``$/cancel_request`` with every params shape, and responses aimed at the connection's
own outgoing requests (right id, wrong id type, duplicates, malformed errors).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from .fuzz_rig import FUZZ_LIMIT, RespondTo
from .wire_oracle import ASK, ECHO, FAIL

TRANSCRIPTS = Path(__file__).parent.parent / "corpus" / "transcripts"


@cache
def corpus() -> tuple[bytes, ...]:
    """Every message of the real transcripts, as compact JSON lines."""
    lines = []
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        for record in path.read_text().splitlines():
            if record.strip():
                lines.append(json.dumps(json.loads(record)["msg"], separators=(",", ":")).encode())
    assert lines, f"no transcripts under {TRANSCRIPTS}"
    return tuple(lines)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
any_ids = json_values
"""Ids of every JSON type: valid (null, integers, strings) and not (the rest)."""
valid_ids = st.none() | st.integers() | st.text(max_size=12)
methods = st.sampled_from([ECHO, FAIL, ASK, "nope", "$/cancel_request", "_ext/x", ""]) | st.text(
    max_size=10
)
structured_params = st.dictionaries(st.text(max_size=6), json_values, max_size=4) | st.lists(
    json_values, max_size=4
)
error_objects = st.fixed_dictionaries(
    {},
    optional={
        "code": st.integers() | json_values,
        "message": st.text(max_size=8) | json_values,
        "data": json_values,
    },
)


@st.composite
def envelopes(draw: st.DrawFn) -> dict[str, Any]:
    """Any mix of the JSON-RPC envelope keys, each with a right or wrong value."""
    return draw(
        st.fixed_dictionaries(
            {},
            optional={
                "jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", 2.0, None]),
                "id": any_ids,
                "method": methods | json_values,
                "params": structured_params | json_values,
                "result": json_values,
                "error": error_objects | json_values,
            },
        )
    )


valid_requests = st.builds(
    lambda request_id, method, params: {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": params,
    },
    valid_ids,
    methods,
    structured_params | st.fixed_dictionaries({"question": st.text(max_size=8) | json_values}),
)
cancel_requests = st.builds(
    lambda params: {"jsonrpc": "2.0", "method": "$/cancel_request", "params": params},
    json_values
    | st.fixed_dictionaries({"requestId": any_ids})
    | st.dictionaries(st.text(max_size=10), any_ids),
)


@st.composite
def corpus_lines(draw: st.DrawFn) -> bytes:
    """A real message: intact, truncated, with a byte replaced, or with invalid UTF-8 inserted."""
    line = draw(st.sampled_from(corpus()))
    cut = draw(st.integers(0, len(line)))
    return draw(
        st.sampled_from(
            [
                line,
                line[:cut],
                line[:cut] + bytes([draw(st.integers(0, 255))]) + line[cut + 1 :],
                line[:cut]
                + draw(st.sampled_from([b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]))
                + line[cut:],
            ]
        )
    )


@st.composite
def reenveloped_corpus(draw: st.DrawFn) -> bytes:
    """A real message with one envelope key replaced or dropped."""
    message = json.loads(draw(st.sampled_from(corpus())))
    key = draw(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]))
    if draw(st.booleans()):
        message.pop(key, None)
    else:
        message[key] = draw(any_ids if key == "id" else json_values)
    return _dumps(message)


def nested(depth: int, opener: bytes, wrapped: bool) -> bytes:
    """``[[...]]`` or ``{"a":{"a":...1}}``, bare or as an echo request's params."""
    body = opener * depth + (b"]" * depth if opener == b"[" else b"1" + b"}" * depth)
    return b'{"jsonrpc":"2.0","id":1,"method":"echo","params":' + body + b"}" if wrapped else body


deep_nesting = st.builds(
    nested,
    st.integers(1, 40) | st.integers(3_000, 200_000),  # parseable, or far beyond any parser's depth
    st.sampled_from([b"[", b'{"a":']),
    st.booleans(),
)


oversized = st.builds(
    lambda size, request_id: (
        b'{"jsonrpc":"2.0","id":%d,"method":"echo","params":["' % request_id + b"x" * size + b'"]}'
    ),
    st.integers(FUZZ_LIMIT - 60, FUZZ_LIMIT * 3),
    st.integers(0, 1000),
)
oversized_responses = st.builds(
    lambda slot, id_form, kind, size: RespondTo(
        slot, id_form, (("jsonrpc", "2.0"), (kind, "x" * size))
    ),
    st.integers(0, 5),
    st.sampled_from(["int", "int", "str", "float", "unknown"]),
    st.sampled_from(["result", "error"]),
    st.integers(FUZZ_LIMIT - 60, FUZZ_LIMIT * 3),
)
"""An over-limit response aimed at an outgoing request; its id comes first (one whose id
cannot be read would fail the connection, which must live on for the next case)."""
ODD_LITERALS = (
    b'{"jsonrpc":"2.0","id":1,"method":"echo","params":[NaN]}',
    b'{"jsonrpc":"2.0","id":1,"method":"echo","params":[-Infinity]}',
    b'{"jsonrpc":"2.0","id":1,"method":"echo","params":[1e400]}',
    b'{"jsonrpc":"2.0","id":1,"method":"echo","params":[' + b"9" * 5000 + b"]}",
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"echo","params":["\\udfff"]}',
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"echo"}',
    b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1,"a":2}}',
    b"\r",
    b" ",
    b" \t \r",
    b"\x00",
)
"""Inputs Python's json module treats specially (non-JSON constants, overflow, digit
limit, surrogates, BOM, duplicate keys) plus near-blank lines."""
odd_literals = st.sampled_from(ODD_LITERALS)


@st.composite
def responses_to_outgoing(draw: st.DrawFn) -> RespondTo:
    """A response aimed at one of the connection's own pending requests."""
    body = draw(
        st.sampled_from(["result", "error", "both", "neither", "no-jsonrpc"]).flatmap(
            lambda kind: st.builds(_response_body, st.just(kind), json_values, error_objects)
        )
    )
    return RespondTo(
        slot=draw(st.integers(0, 5)),
        id_form=draw(st.sampled_from(["int", "int", "int", "str", "float", "unknown"])),
        body=body,
    )


def _response_body(kind: str, result: Any, error: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    valid_error = {"code": -32000, "message": "peer failed"}
    body: dict[str, Any] = {"jsonrpc": "2.0"}
    if kind in ("result", "both", "no-jsonrpc"):
        body["result"] = result
    if kind in ("error", "both"):
        body["error"] = error if error else valid_error
    if kind == "no-jsonrpc":
        del body["jsonrpc"]
    return tuple(body.items())


case_items = st.one_of(
    st.binary(max_size=64),
    envelopes().map(_dumps),
    valid_requests.map(_dumps),
    cancel_requests.map(_dumps),
    st.lists(envelopes() | valid_requests, max_size=3).map(_dumps),
    corpus_lines(),
    reenveloped_corpus(),
    deep_nesting,
    oversized,
    oversized_responses,
    odd_literals,
    responses_to_outgoing(),
)
cases = st.lists(case_items, min_size=1, max_size=8)
chunkings = st.lists(st.integers(1, 512), max_size=6)
"""Sizes of the first writes to the connection's input, so lines straddle reads."""
