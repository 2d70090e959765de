"""JSON-RPC 2.0 envelopes: classify an incoming JSON value, build outgoing ones.

Pure functions and small records, no I/O. Ids are kept exactly as received
(``None``, ``int`` or ``str``) and compared by :func:`id_key`, because Python treats
``1 == True`` and ``hash(1) == hash(True)`` while JSON-RPC does not, and ``5`` is not
``"5"``.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeAlias, TypeGuard, cast

from pydantic_core import from_json

from ._errors import RequestError
from ._methods import EncodedJson, JsonValue, Payload

RequestId: TypeAlias = int | str | None
"""A JSON-RPC id as received: ``null``, an integer or a string."""

IdKey: TypeAlias = tuple[type, int | str | None]
"""A dictionary key that matches ids by exact JSON value and type."""


RawParams: TypeAlias = "JsonValue | Mapping[str, Any] | Sequence[Any]"
"""Params of an untyped call: normally a JSON object or array (any JSON-encodable
contents), or ``None`` for none. Looser than :data:`JsonValue` so ``dict[str, str]`` and
friends type-check (``dict`` is invariant)."""


def as_json(params: RawParams) -> JsonValue:
    """View raw params as a JSON value (they are encoded as they are)."""
    return cast(JsonValue, params)


def id_key(request_id: RequestId) -> IdKey:
    """The exact-match key of an id (``1``, ``"1"`` and ``True`` all differ)."""
    return (type(request_id), request_id)


def is_request_id(value: object) -> TypeGuard[RequestId]:
    """True for a valid JSON-RPC id: ``None``, a non-bool ``int`` or a ``str``."""
    return value is None or type(value) is int or type(value) is str


class _Record:
    """A message record: ``__slots__`` and ``__init__`` written out, ``repr`` from the
    slots. Plain classes, not dataclasses: a slotted dataclass costs about 0.4 ms to create
    (it compiles its methods) and every agent creates these at start-up (cold start, issue
    34); a named tuple costs less to create but more per message, and these are made for
    every message."""

    __slots__ = ()

    def __repr__(self) -> str:
        names: tuple[str, ...] = self.__slots__
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__name__}({fields})"


class Request(_Record):
    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: JsonValue) -> None:
        self.id = id
        self.method = method
        self.params = params


class Notification(_Record):
    __slots__ = ("method", "params")

    def __init__(self, method: str, params: JsonValue) -> None:
        self.method = method
        self.params = params


class Response(_Record):
    __slots__ = ("error", "id", "result")

    def __init__(self, id: RequestId, result: JsonValue, error: RequestError | None) -> None:
        self.id = id
        self.result = result
        self.error = error


class Invalid(_Record):
    """A value that is not a valid message. ``reply`` is False when it looked like a
    response (responses are never answered); ``response_id`` is the id of a malformed
    response, when it has a valid one, so the request it names can still be settled."""

    __slots__ = ("reason", "reply", "response_id")

    def __init__(self, reason: str, reply: bool, response_id: RequestId = None) -> None:
        self.reason = reason
        self.reply = reply
        self.response_id = response_id


Message: TypeAlias = Request | Notification | Response | Invalid


def classify(value: JsonValue) -> Message:
    """Sort one parsed JSON value into a request, notification, response or invalid."""
    if not isinstance(value, dict):
        return Invalid("message is not a JSON object", reply=True)
    method = value.get("method")
    if method is not None or "method" in value:
        return _classify_call(value, method)
    return _classify_response(value)


def _classify_call(value: dict[str, JsonValue], method: JsonValue) -> Message:
    if value.get("jsonrpc") != "2.0":
        return Invalid('"jsonrpc" must be "2.0"', reply=True)
    if not isinstance(method, str):
        return Invalid('"method" must be a string', reply=True)
    if "result" in value or "error" in value:
        return Invalid('a call must not carry "result" or "error"', reply=True)
    params = value.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        return Invalid('"params" must be an object or an array', reply=True)
    if "id" not in value:
        return Notification(method, params)
    request_id = value["id"]
    if not is_request_id(request_id):
        return Invalid('"id" must be a string, an integer or null', reply=True)
    return Request(request_id, method, params)


def _classify_response(value: dict[str, JsonValue]) -> Message:
    has_result = "result" in value
    has_error = "error" in value
    if "id" not in value or has_result == has_error or value.get("jsonrpc") != "2.0":
        request_id = value.get("id")
        return Invalid(
            "malformed response",
            reply=not (has_result or has_error),
            response_id=request_id if is_request_id(request_id) else None,
        )
    request_id = value["id"]
    if not is_request_id(request_id):
        return Invalid("malformed response id", reply=False)
    if has_error:
        return Response(request_id, None, RequestError.from_wire(value["error"]))
    return Response(request_id, value["result"], None)


def _reject_constant(name: str) -> JsonValue:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_SCAN_VALUE = cast("Callable[[str, int], tuple[Any, int]]", vars(_DECODER)["scan_once"])
"""The decoder's (C) scanner: ``JSONDecoder.decode`` minus its two whitespace regex
matches, which cost about as much as scanning a small message."""


LARGE_MESSAGE_BYTES = 1024 * 1024
"""Messages at least this long are parsed from their bytes (pydantic-core's parser)
rather than from their decoded text: a bad one then costs no copy of itself, and a good
one is parsed as fast or faster. Below this, the text copy costs less than this much."""

_TEXT_PARSER_ONLY = re.compile("hex escape|recursion limit|out of range")
"""pydantic-core's errors for what the text parser may take: lone surrogate escapes,
nesting past 200 levels, numbers of more than 4,300 digits (``1111…1.0`` is infinity to
the text parser). Those messages go to the text parser, which decides."""


def decode(data: bytes) -> JsonValue:
    """Parse one incoming message as strict JSON in UTF-8.

    Raises ``ValueError`` for anything else, including ``NaN``/``Infinity`` (which
    :func:`encode` could not send back) and nesting too deep for the parser, which
    Python reports as ``RecursionError``.
    """
    if len(data) >= LARGE_MESSAGE_BYTES and (parsed := _decode_large(data)) is not None:
        return parsed[0]
    try:
        text = data.decode()
        try:
            value, end = _SCAN_VALUE(text, 0)
        except StopIteration:
            end = -1  # not a value at offset 0 (leading white space, or not JSON)
        if end != len(text):  # let the full decoder handle white space or report
            value = _DECODER.decode(text)
        return value  # type: ignore[no-any-return]
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _decode_large(data: bytes) -> tuple[JsonValue] | None:
    """:func:`decode` without a text copy: ``(value,)``, or None where the text parser
    must decide. Same values and verdicts (a test pins this against the text parser)."""
    try:
        return (cast(JsonValue, from_json(data, allow_inf_nan=False, cache_strings="keys")),)
    except ValueError as exc:
        if _TEXT_PARSER_ONLY.search(str(exc)) is None:
            raise ValueError(f"not JSON: {exc}") from None
    return None


class EnvelopeHead(NamedTuple):
    """What the first bytes of a message too large to read say about it: the top-level
    keys seen (the last one's value may be cut off) and its id, if one was read whole."""

    keys: frozenset[str]
    id: RequestId = None
    has_id: bool = False
    """True when ``id`` was read whole and is a valid id (``null`` included)."""
    id_known: bool = False
    """True when an id was read whole, valid or not: it then names no other request."""

    @property
    def is_call(self) -> bool:
        return "method" in self.keys or "params" in self.keys

    @property
    def is_response(self) -> bool:
        return not self.is_call and ("result" in self.keys or "error" in self.keys)


_WHITE_SPACE = re.compile(r"[ \t\n\r]*")


def read_envelope_head(prefix: bytes) -> EnvelopeHead | None:
    """Read the top-level members of a JSON object from its first bytes only.

    For an over-limit message, of which the framing kept a prefix: the members whose
    values end within it are read (only the id is kept), and the key of the first one
    cut off is noted too. None when the prefix is not the start of a JSON object in UTF-8.
    """
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(prefix)  # a cut-off character waits
    except UnicodeDecodeError:
        return None
    position = _skip_white_space(text, 0)
    if not text.startswith("{", position):
        return None
    keys: set[str] = set()
    found: list[Any] = []  # the id's value, once read whole
    position += 1
    while position >= 0 and (member := _scan_member(text, position)) is not None:
        key, value, position = member
        keys.add(key)
        if key == "id" and value:
            found = list(value)
    if found and is_request_id(found[0]):
        return EnvelopeHead(frozenset(keys), found[0], has_id=True, id_known=True)
    return EnvelopeHead(frozenset(keys), id_known=bool(found))


def _skip_white_space(text: str, position: int) -> int:
    return _WHITE_SPACE.match(text, position).end()  # type: ignore[union-attr]


def _scan_member(text: str, position: int) -> tuple[str, tuple[Any] | tuple[()], int] | None:
    """The member at ``position``: its key, ``(value,)`` if the value ends within ``text``
    (else ``()``), and where the next member starts (-1: none follows in ``text``).
    None when not even a key and its colon are there."""
    position = _skip_white_space(text, position)
    if not text.startswith('"', position):
        return None
    try:
        key, position = _SCAN_VALUE(text, position)
    except (StopIteration, ValueError):
        return None
    position = _skip_white_space(text, position)
    if not text.startswith(":", position):
        return None
    try:
        value, end = _SCAN_VALUE(text, _skip_white_space(text, position + 1))
    except (StopIteration, ValueError, RecursionError):
        return key, (), -1
    end = _skip_white_space(text, end)
    if text.startswith(",", end):
        return key, (value,), end + 1
    if text.startswith("}", end):
        return key, (value,), -1
    return key, (), -1  # cut off here: a number or a literal may go on


def log_fields(method: str | None, request_id: RequestId = None) -> dict[str, object]:
    """``extra`` for log records, so handlers can filter or index by request:
    ``record.acp_method`` and ``record.acp_request_id``."""
    return {"acp_method": method, "acp_request_id": request_id}


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
"""What ``json.dumps`` builds on every call with these options, built once."""


def _not_json(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_MAKE_C_ENCODER: Callable[..., Any] | None = vars(json.encoder).get("c_make_encoder")
_C_ENCODE = cast(
    "Callable[[object, int], Sequence[str]] | None",
    _MAKE_C_ENCODER
    and _MAKE_C_ENCODER(
        None,
        _not_json,
        vars(json.encoder)["c_encode_basestring"],
        None,
        ":",
        ",",
        False,
        False,
        False,
    ),
)
"""``_ENCODER``'s C encoder, made once instead of on every ``encode`` call; without
circular-reference markers (a cycle ends in ``RecursionError``, reported below)."""


def encode(message: dict[str, JsonValue]) -> bytes:
    """Compact UTF-8 JSON text of one message (no framing).

    Raises ``ValueError`` (or ``TypeError``) for what JSON cannot carry: ``NaN``,
    infinities, non-JSON types, nesting too deep. Strings with lone surrogates (a peer
    can send ``"\\ud800"``) cannot be UTF-8, so such a message is written ASCII-escaped.
    """
    try:
        if _C_ENCODE is not None:
            return "".join(_C_ENCODE(message, 0)).encode()
        return _ENCODER.encode(message).encode()
    except UnicodeEncodeError:
        return _ASCII_ENCODER.encode(message).encode()
    except RecursionError:
        raise ValueError("message nested too deeply to encode") from None


def request_message(request_id: RequestId, method: str, params: JsonValue) -> dict[str, JsonValue]:
    message: dict[str, JsonValue] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification_message(method: str, params: JsonValue) -> dict[str, JsonValue]:
    message: dict[str, JsonValue] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def result_message(request_id: RequestId, result: JsonValue) -> dict[str, JsonValue]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


_ENCODE_STR: Callable[[str], str] = vars(json.encoder)["encode_basestring"]
_ENCODE_STR_ASCII: Callable[[str], str] = vars(json.encoder)["encode_basestring_ascii"]


def _string_text(text: str) -> bytes:
    try:
        return _ENCODE_STR(text).encode()
    except UnicodeEncodeError:  # a lone surrogate: escaped, as ``encode`` does
        return _ENCODE_STR_ASCII(text).encode()


_method_text = functools.lru_cache(maxsize=1024)(_string_text)
"""JSON text of a method name: a handful of names, each written over and over."""


def _id_text(request_id: RequestId) -> bytes:
    if type(request_id) is int:
        return str(request_id).encode()
    return b"null" if request_id is None else _string_text(cast(str, request_id))


# The builders below write a message whose payload pydantic-core encoded already
# (:class:`EncodedJson`) around it, field by field: for such short envelopes that
# costs a fraction of what the general encoder spends on one call.


def encode_request(request_id: RequestId, method: str, params: Payload) -> bytes:
    """:func:`encode` of :func:`request_message`."""
    if not isinstance(params, EncodedJson):
        return encode(request_message(request_id, method, params))
    return b"".join(
        (
            b'{"jsonrpc":"2.0","id":',
            _id_text(request_id),
            b',"method":',
            _method_text(method),
            b',"params":',
            params.text,
            b"}",
        )
    )


def encode_notification(method: str, params: Payload) -> bytes:
    """:func:`encode` of :func:`notification_message`."""
    if not isinstance(params, EncodedJson):
        return encode(notification_message(method, params))
    return b"".join(
        (b'{"jsonrpc":"2.0","method":', _method_text(method), b',"params":', params.text, b"}")
    )


def encode_result(request_id: RequestId, result: Payload) -> bytes:
    """:func:`encode` of :func:`result_message`."""
    if not isinstance(result, EncodedJson):
        return encode(result_message(request_id, result))
    return b"".join(
        (b'{"jsonrpc":"2.0","id":', _id_text(request_id), b',"result":', result.text, b"}")
    )


def error_message(request_id: RequestId, error: RequestError) -> dict[str, JsonValue]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
