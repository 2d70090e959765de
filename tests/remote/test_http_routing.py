"""The routing read of a message (the HTTP server's of each agent message, the client's
of each event): the quick read of the usual layouts must agree with a full parse wherever
it answers at all."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from acp_runtime._jsonrpc import EncodedJson, encode_notification, encode_request, encode_result
from acp_runtime.remote._http_connection import _outgoing, _quick_outgoing
from acp_runtime.remote._message_route import is_plain_notification, quick_route

texts = st.text(max_size=12)
ids = st.integers(min_value=-5, max_value=10**12) | texts
params = st.fixed_dictionaries({}, optional={"sessionId": texts, "x": st.integers()}) | st.just(
    {"update": {"sessionId": "nested"}}
)


def parsed(message: bytes) -> object:
    """What the full parse says, forcing it past the quick read."""
    return _outgoing(b" " + message)


@given(st.text(max_size=10), params)
def test_notifications_read_quickly_agree_with_a_parse(
    method: str, body: dict[str, object]
) -> None:
    message = encode_notification(
        method, EncodedJson(json.dumps(body, separators=(",", ":")).encode())
    )
    quick = _quick_outgoing(message)
    assert quick is None or quick == parsed(message)


@given(ids, st.text(max_size=10), params)
def test_requests_read_quickly_agree_with_a_parse(
    request_id: int | str, method: str, body: dict[str, object]
) -> None:
    payload = EncodedJson(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())
    message = encode_request(request_id, method, payload)
    quick = _quick_outgoing(message)
    assert quick is None or quick == parsed(message)


@given(ids, st.dictionaries(texts, texts | st.integers(), max_size=3))
def test_results_read_quickly_agree_with_a_parse(
    request_id: int | str, result: dict[str, object]
) -> None:
    message = encode_result(request_id, EncodedJson(json.dumps(result).encode()))
    quick = _quick_outgoing(message)
    assert quick is None or quick == parsed(message)


def test_the_usual_messages_take_the_quick_read() -> None:
    update = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{}}}'
    ask = b'{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"s-1"}}'
    answer = b'{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}'
    for message in (update, ask, answer):
        assert _quick_outgoing(message) == parsed(message)
    new = b'{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s-1"}}'
    assert _quick_outgoing(new) is None  # the new session id's length is checked by a parse


def test_an_id_after_the_params_is_read_by_a_parse() -> None:
    late = b'{"jsonrpc":"2.0","method":"m","params":{"sessionId":"s-1"},"id":4}'
    assert quick_route(late) is None
    assert not is_plain_notification(late)
    assert parsed(late) == _outgoing(late)


@given(st.dictionaries(texts, texts | st.integers(), max_size=3), st.booleans(), ids)
def test_a_plain_notification_is_one_by_a_parse(
    body: dict[str, object], add_id: bool, request_id: int | str
) -> None:
    value: dict[str, object] = {"jsonrpc": "2.0", "method": "m", "params": body}
    if add_id:
        value["id"] = request_id
    message = json.dumps(value, separators=(",", ":")).encode()
    if is_plain_notification(message):
        assert "id" not in json.loads(message)
    assert is_plain_notification(message) == (not add_id and '"id"' not in message.decode())
