"""Every pending request settles exactly once, whatever the peer answers (REL-1, REL-2).

* An over-limit response fails the request its id names; the id is read from the first
  bytes the framing kept (``MessageTooLarge.prefix``). When no id can be read and
  requests are pending, one of them lost its answer and nothing says which: the
  connection fails as for a transport error, so every pending request settles.
* A malformed response (``result`` and ``error``, neither, no ``"jsonrpc": "2.0"``) for
  a pending id settles that request with -32600.

Responses are never answered, so none of this puts anything on the wire. Both sides are
checked: a client's request and an agent's request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    JsonValue,
    RequestError,
    SentRequest,
    memory_pair,
)
from acp_runtime._roles import Role
from acp_runtime.testing import WirePeer
from acp_runtime.transports import MemoryTransport, MessageTooLarge

from .helpers import request

pytestmark = pytest.mark.anyio

LIMIT = 1024
SIDES: list[tuple[Role, str]] = [("client", "session/prompt"), ("agent", "fs/read_text_file")]
"""Each side with a request it would send."""


class TooLargeWhenMarked:
    """A transport that reports ``MessageTooLarge`` for messages starting with ``HUGE``,
    the rest of the message being the prefix a framing transport would have kept."""

    def __init__(self, inner: MemoryTransport) -> None:
        self._inner = inner

    async def receive(self) -> bytes:
        data = await self._inner.receive()
        if data.startswith(b"HUGE"):
            raise MessageTooLarge(LIMIT, data[4:])
        return data

    async def send(self, message: bytes) -> None:
        await self._inner.send(message)

    async def aclose(self) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def side(role: Role) -> AsyncIterator[tuple[Connection, WirePeer]]:
    ours, theirs = memory_pair()
    async with ConnectionBuilder(role).connect(TooLargeWhenMarked(ours)) as cx:
        yield cx, WirePeer(theirs)


async def outcome(sent: SentRequest[JsonValue]) -> JsonValue | RequestError:
    with anyio.fail_after(5):
        try:
            return await sent
        except RequestError as error:
            return error


TOO_LARGE = RequestError(-32600, "Invalid request", {"reason": "message_too_large", "limit": LIMIT})


@pytest.mark.parametrize(("role", "method"), SIDES)
@pytest.mark.parametrize(
    "head",
    [
        b'{"jsonrpc":"2.0","id":%d,"result":{"content":"xxxx',
        b'{"id":%d,"jsonrpc":"2.0","error":{"code":1,"message":"xxx',
        b' {"jsonrpc" : "2.0" , "id" : %d , "result": "xx\xc3',  # white space, a cut character
        b'{"jsonrpc":"2.0","id":%d,"_meta":{"x":"xxxx',  # no result key yet, but our id
    ],
    ids=["result", "error", "spaced", "id-only"],
)
async def test_rel1_an_over_limit_response_fails_the_request_its_prefix_names(
    role: Role, method: str, head: bytes
) -> None:
    async with side(role) as (cx, peer):
        other = cx.send_raw_request(method, {"n": 0})
        sent = cx.send_raw_request(method, {"n": 1})
        await peer.receive()
        await peer.receive()
        await peer.send(b"HUGE" + head % sent.id)
        assert await outcome(sent) == TOO_LARGE
        await peer.receive_nothing_until_barrier()  # a response is never answered
        assert cx.pending_request_count == 1 and not cx.is_incoming_closed
        await peer.send({"jsonrpc": "2.0", "id": other.id, "result": "fine"})
        assert await outcome(other) == "fine"


@pytest.mark.parametrize(("role", "method"), SIDES)
async def test_rel1_an_over_limit_response_with_no_readable_id_fails_the_connection(
    role: Role, method: str
) -> None:
    async with side(role) as (cx, peer):
        pending = [cx.send_raw_request(method, {"n": n}) for n in range(3)]
        await peer.send(b'HUGE{"jsonrpc":"2.0","result":{"content":"xxxxxxx')  # id comes later
        outcomes = [await outcome(sent) for sent in pending]
        assert all(isinstance(o, RequestError) and o.is_connection_closed for o in outcomes)
        assert isinstance(cx.transport_error, MessageTooLarge)
        assert cx.is_incoming_closed and cx.pending_request_count == 0


@pytest.mark.parametrize(
    "data",
    [
        b'HUGE{"jsonrpc":"2.0","result":"xxxxx',  # nothing pending: it answers nothing
        b'HUGE{"jsonrpc":"2.0","id":"elsewhere","result":"xxxx',  # an id we never sent
        b'HUGE{"jsonrpc":"2.0","id":1.5,"error":{"code":',  # an id that is no id
    ],
    ids=["nothing-pending", "unknown-id", "invalid-id"],
)
async def test_rel1_over_limit_responses_naming_no_pending_request_are_ignored(
    data: bytes,
) -> None:
    async with side("client") as (cx, peer):
        if b'"id"' in data:
            sent = cx.send_raw_request("x")
            await peer.receive()
        await peer.send(data)
        await peer.receive_nothing_until_barrier()
        assert not cx.is_incoming_closed and cx.transport_error is None
        if b'"id"' in data:
            await peer.send({"jsonrpc": "2.0", "id": sent.id, "result": 1})
            assert await outcome(sent) == 1


@pytest.mark.parametrize(
    ("data", "reply_id"),
    [
        (b'HUGE{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"xxx', 7),
        (b'HUGE{"jsonrpc":"2.0","id":"s","params":["xxx', "s"),
        (b'HUGE{"jsonrpc":"2.0","method":"x","params":{"a":"xxxx', None),  # id later, if any
        (b"HUGExxxxxxxxxxxxxxxxxxxxxxxxxxx", None),
        (b'HUGE{"jsonrpc":"2.0","id":true,"method":"x","params":{"a":"xxx', None),
    ],
    ids=["request", "params-first", "no-id-yet", "not-json", "bad-id"],
)
async def test_rel1_an_over_limit_request_is_answered_with_its_id_when_it_was_read(
    data: bytes, reply_id: JsonValue
) -> None:
    async with side("agent") as (cx, peer):
        await peer.send(data)
        reply = await peer.receive()
        assert reply == {
            "jsonrpc": "2.0",
            "id": reply_id,
            "error": {
                "code": -32600,
                "message": "Invalid request",
                "data": {"reason": "message_too_large", "limit": LIMIT},
            },
        }
        assert cx.incoming_request_count == 0


MALFORMED = {
    "both": {"jsonrpc": "2.0", "result": 1, "error": {"code": 1, "message": "m"}},
    "neither": {"jsonrpc": "2.0"},
    "no-version": {"result": 1},
    "wrong-version": {"jsonrpc": "1.0", "error": {"code": 1, "message": "m"}},
}


@pytest.mark.parametrize(("role", "method"), SIDES)
@pytest.mark.parametrize("body", list(MALFORMED.values()), ids=list(MALFORMED))
async def test_rel2_a_malformed_response_for_a_pending_id_settles_it_with_32600(
    role: Role, method: str, body: dict[str, Any]
) -> None:
    async with side(role) as (cx, peer):
        awaited = cx.send_raw_request(method)
        called_back: list[JsonValue | RequestError] = []

        async def record(result: JsonValue | RequestError) -> None:
            called_back.append(result)

        cx.send_raw_request(method).on_receiving_result(record)
        first, second = await peer.receive(), await peer.receive()
        await peer.send({**body, "id": first["id"]})
        await peer.send({**body, "id": second["id"]})
        settled = await outcome(awaited)
        assert isinstance(settled, RequestError) and settled.code == -32600
        assert settled.data == {
            "reason": "malformed_response",
            "detail": 'a response needs "jsonrpc": "2.0" and exactly one of "result" and "error"',
        }
        await peer.receive_nothing_until_barrier()
        assert called_back == [settled]
        # Settled once: the well-formed answer that follows finds no request.
        await peer.send({"jsonrpc": "2.0", "id": first["id"], "result": "late"})
        await peer.receive_nothing_until_barrier()
        assert cx.pending_request_count == 0


async def test_rel2_a_malformed_response_naming_no_pending_request_changes_nothing() -> None:
    async with side("client") as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        await peer.send({**MALFORMED["both"], "id": sent.id + 1})
        await peer.send({**MALFORMED["neither"], "id": str(sent.id)})  # a string is not our id
        assert (await peer.receive())["error"]["code"] == -32600  # "neither" is answered
        await peer.receive_nothing_until_barrier()
        assert cx.pending_request_count == 1
        await peer.send(request("ping", "ping"))  # and the connection goes on
        assert (await peer.receive())["error"]["code"] == -32601
        sent.detach()
