"""What a conforming connection must answer to arbitrary input: the fuzzing oracle.

Written from the JSON-RPC 2.0 spec and DESIGN.md's hygiene rules, not from the runtime's
code, so the fuzz tests compare two independent readings of the same rules:

* bytes are split into lines at ``\\n`` (one ``\\r`` before it dropped); empty lines and
  lines of JSON white space only are skipped (the rig's streams never start here, so a
  byte-order mark is never at the start of the stream);
* a line over the limit is judged by its first 1 KiB: a call (``method`` or ``params``
  among its keys) gets -32600 ``message_too_large`` with its id if that was read whole,
  else id null; a response (``result`` or ``error`` among its keys, or the id of an
  outstanding request) gets nothing, and settles that request with -32600; anything
  else gets the -32600 with id null;
* a line that is not strict JSON in UTF-8 (``NaN``, bad UTF-8, nesting too deep to
  parse) gets -32700 with id null; an array (batch) or a non-object gets -32600;
* a call (has ``method``) that breaks the envelope rules gets -32600 with id null; a
  valid request gets exactly one response with its id; a notification gets nothing;
* a response-like object gets nothing, except one with neither ``result`` nor
  ``error`` (-32600) when its id names no outstanding request; a valid response settles
  the outgoing request with that exact integer id, once; a malformed one (both
  ``result`` and ``error``, neither, or no ``"jsonrpc": "2.0"``) settles it with -32600.

Accepted leniencies of the runtime, spelled out: ``"params": null`` counts as absent.
"""

from __future__ import annotations

import codecs
import json
import math
from dataclasses import dataclass, field
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

ECHO, FAIL, ASK = "echo", "fail", "test/ask"
"""Methods the fuzzed connection handles: echo the params, crash, typed ``{"question": str}``."""


def _reject(name: str) -> Any:
    raise ValueError(name)


def strict_json(data: bytes) -> Any:
    """Parse strict JSON in UTF-8; raises ``ValueError`` for anything else."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject)
    except RecursionError:
        raise ValueError("too deep") from None


def same_id(a: Any, b: Any) -> bool:
    """JSON-RPC ids match by exact JSON value: ``1`` is neither ``"1"`` nor ``true``."""
    return type(a) is type(b) and a == b


def is_valid_id(value: Any) -> bool:
    return value is None or type(value) in (int, str)


def split_lines(payload: bytes, limit: int) -> list[bytes]:
    """Newline framing: the messages a reader sees (payload ends with ``\\n``). Blank
    lines within the limit are skipped (over it, a line is refused before it is read)."""
    lines = []
    for raw in payload.split(b"\n")[:-1]:
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if len(line) > limit or line.strip(b" \t\r"):
            lines.append(line)
    return lines


PREFIX_BYTES = 1024
"""What the framing keeps of an over-limit line."""


@dataclass
class Head:
    """The oracle's own reading of an over-limit line's first bytes."""

    keys: set[str]
    id: Any = None
    id_read: bool = False


def read_head(prefix: bytes) -> Head | None:
    """Brute force: the longest cut of the prefix at a top-level ``,`` or ``}`` that
    closes into a JSON object holds the complete members; the longest cut after a ``:``
    that closes with ``null}`` adds the key whose value was cut off."""
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(prefix)
    except UnicodeDecodeError:
        return None
    if not text.lstrip(" \t\n\r").startswith("{"):
        return None
    complete: dict[str, Any] = {}
    with_cut: set[str] = set()
    for i, char in enumerate(text):
        if char in ",}" and isinstance(members := _parse(text[:i] + "}"), dict):
            complete = members
        elif char == ":" and isinstance(members := _parse(text[: i + 1] + "null}"), dict):
            with_cut = set(members)
    return Head(set(complete) | with_cut, complete.get("id"), "id" in complete)


def _parse(text: str) -> Any:
    try:
        return strict_json(text.encode("utf-8", "surrogatepass"))
    except ValueError:
        return None


@dataclass
class Reply:
    """One expected message back: its id and either an error code or an exact result."""

    id: Any
    code: int | None = None
    result: Any = None
    reason: str | None = None
    """Expected ``error.data.reason`` when it matters (``message_too_large``)."""

    def matches(self, message: dict[str, Any]) -> bool:
        if set(message) - {"jsonrpc", "id", "result", "error"} or message.get("jsonrpc") != "2.0":
            return False
        if "id" not in message or not same_id(message["id"], self.id):
            return False
        if self.code is None:
            return (
                "error" not in message and "result" in message and message["result"] == self.result
            )
        error = message.get("error")
        if "result" in message or not isinstance(error, dict) or error.get("code") != self.code:
            return False
        if not isinstance(error.get("message"), str):
            return False
        data = error.get("data")
        return self.reason is None or (isinstance(data, dict) and data.get("reason") == self.reason)


@dataclass
class Expectation:
    """What one fuzz case must produce."""

    replies: list[Reply] = field(default_factory=list[Reply])
    settled: dict[int, Any] = field(default_factory=dict[int, Any])
    """Outgoing request id -> ("result", value) or ("error", code), first valid response wins."""


def expect(payload: bytes, limit: int, outstanding: set[int]) -> Expectation:
    """Expected replies (in order) and settlements for ``payload``, given our
    outstanding outgoing request ids."""
    outcome = Expectation()
    for line in split_lines(payload, limit):
        if len(line) > limit:
            _too_large(line[: min(PREFIX_BYTES, limit)], outcome, outstanding)
            continue
        try:
            value = strict_json(line)
        except ValueError:
            outcome.replies.append(Reply(None, PARSE_ERROR))
            continue
        if not isinstance(value, dict):
            outcome.replies.append(Reply(None, INVALID_REQUEST))
        elif "method" in value:
            reply = _call(value)
            if reply is not None:
                outcome.replies.append(reply)
        else:
            _response(value, outcome, outstanding)
    return outcome


def _call(value: dict[str, Any]) -> Reply | None:
    params = value.get("params")
    valid = (
        value.get("jsonrpc") == "2.0"
        and isinstance(value["method"], str)
        and "result" not in value
        and "error" not in value
        and (params is None or isinstance(params, (dict, list)))
        and ("id" not in value or is_valid_id(value["id"]))
    )
    if not valid:
        return Reply(None, INVALID_REQUEST)
    if "id" not in value:
        return None
    return _answer(value["id"], value["method"], params)


def _answer(request_id: Any, method: str, params: Any) -> Reply:
    if method == ECHO:
        if not _finite(params):
            return Reply(request_id, INTERNAL_ERROR)  # 1e400 parses to inf: not sendable
        return Reply(request_id, result={"params": params})
    if method == FAIL:
        return Reply(request_id, INTERNAL_ERROR)
    if method == ASK:
        if isinstance(params, dict) and isinstance(params.get("question"), str):
            return Reply(request_id, result={"text": params["question"]})
        return Reply(request_id, INVALID_PARAMS)
    return Reply(request_id, METHOD_NOT_FOUND)


def _too_large(prefix: bytes, outcome: Expectation, outstanding: set[int]) -> None:
    head = read_head(prefix)
    too_large = Reply(None, INVALID_REQUEST, reason="message_too_large")
    if head is None:
        outcome.replies.append(too_large)
        return
    valid_id = head.id_read and is_valid_id(head.id)
    if "method" in head.keys or "params" in head.keys:
        too_large.id = head.id if valid_id else None
        outcome.replies.append(too_large)
    elif "result" in head.keys or "error" in head.keys or _waiting(head.id, outcome, outstanding):
        if _waiting(head.id, outcome, outstanding):
            outcome.settled[head.id] = ("error", INVALID_REQUEST)
        # the strategies never make a response whose id cannot be read: the connection
        # would fail, and the rig needs it for the next case
        assert head.id_read, f"over-limit response without a readable id: {prefix!r}"
    else:
        outcome.replies.append(too_large)


def _waiting(request_id: Any, outcome: Expectation, outstanding: set[int]) -> bool:
    """Whether ``request_id`` names an outgoing request not settled yet."""
    return (
        type(request_id) is int and request_id in outstanding and request_id not in outcome.settled
    )


def _response(value: dict[str, Any], outcome: Expectation, outstanding: set[int]) -> None:
    has_result, has_error = "result" in value, "error" in value
    request_id = value.get("id")
    well_formed = "id" in value and has_result != has_error and value.get("jsonrpc") == "2.0"
    if not well_formed and _waiting(request_id, outcome, outstanding):
        outcome.settled[request_id] = ("error", INVALID_REQUEST)  # malformed, yet it answers
        return
    if not (has_result or has_error):
        outcome.replies.append(Reply(None, INVALID_REQUEST))
        return
    if not well_formed or not _waiting(request_id, outcome, outstanding):
        return  # never answered; at most it is logged
    if has_result:
        outcome.settled[request_id] = ("result", value["result"])
    else:
        error = value["error"]
        well_formed = (
            isinstance(error, dict)
            and type(error.get("code")) is int
            and isinstance(error.get("message"), str)
        )
        outcome.settled[request_id] = ("error", error["code"] if well_formed else INTERNAL_ERROR)


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(item) for item in value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    return True
