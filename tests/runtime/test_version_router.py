"""VersionRouter: the first valid ``initialize`` picks the builder, by the TypeScript
router's rules; what comes before it is answered by the router, what comes after goes
to the chosen connection unchanged."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    ErrorCode,
    JsonValue,
    RequestError,
    Responder,
    Transport,
    memory_pair,
)
from acp_runtime._initialize_params import initialize_params_for
from acp_runtime.proxies import VersionRouter
from acp_runtime.testing import WirePeer, cancel, error, notification, request, result
from acp_runtime.transports import MessageTooLarge

FIRST = "first ACP request must be initialize"
BAD_VERSION = "initialize.protocolVersion must be a valid ACP protocol version"
V2_IDS = "ACP v2 request IDs must be strings or integers"
INFO = {"name": "client", "version": "1.0"}


def initialize(request_id: JsonValue, version: JsonValue, **params: JsonValue) -> dict[str, Any]:
    return request(request_id, "initialize", {"protocolVersion": version, **params})


class Recorder:
    """Handlers of one version: record every call, answer ``{"v": version, "method": ...}``.

    A request for ``test/park`` is parked until it is cancelled, then answered -32800.
    """

    def __init__(self, version: int) -> None:
        self.version = version
        self.calls: list[tuple[str, JsonValue]] = []

    async def on_request(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        self.calls.append((method, params))
        if method == "test/park" or (isinstance(params, dict) and params.get("park")):
            responder.connection.spawn(self._answer_when_cancelled, responder)
            return None
        return {"v": self.version, "method": method}

    async def _answer_when_cancelled(self, responder: Responder[JsonValue]) -> None:
        await responder.cancellation.cancelled()
        responder.respond_with_error(RequestError.request_cancelled())

    async def on_notification(self, method: str, params: JsonValue, cx: Connection) -> None:
        self.calls.append((method, params))

    def builder(self) -> ConnectionBuilder:
        builder = ConnectionBuilder(role="agent")
        return builder.on_raw_request(self.on_request).on_raw_notification(self.on_notification)


class Agents:
    """A router over recorders of the given versions."""

    def __init__(self, *versions: int) -> None:
        self.v1 = Recorder(1)
        self.v2 = Recorder(2)
        self.router = VersionRouter(
            v1=self.v1.builder() if 1 in versions else None,
            v2=self.v2.builder() if 2 in versions else None,
        )


def answer(request_id: JsonValue, version: int, method: str = "initialize") -> dict[str, Any]:
    return result(request_id, {"v": version, "method": method})


@asynccontextmanager
async def served(router: VersionRouter) -> AsyncIterator[WirePeer]:
    """A WirePeer talking to ``router.serve``; leaving closes the peer's side and waits."""
    ours, theirs = memory_pair()
    peer = WirePeer(theirs)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(router.serve, ours)
            yield peer
            peer.close()


# -- selection -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("versions", "requested", "selected"),
    [
        ((1, 2), 0, None),
        ((1, 2), 1, 1),
        ((1, 2), 2, 2),
        ((1, 2), 3, 2),
        ((1, 2), 0xFFFF, 2),
        ((1,), 0, 1),  # v1 only: the legacy fallback serves everything
        ((1,), 1, 1),
        ((1,), 2, 1),
        ((1,), 7, 1),
        ((2,), 0, None),
        ((2,), 1, None),
        ((2,), 2, 2),
        ((2,), 3, 2),
    ],
)
def test_select_picks_the_highest_configured_version_at_or_below_the_request(
    versions: tuple[int, ...], requested: int, selected: int | None
) -> None:
    router = Agents(*versions).router
    assert router.select(requested) == selected
    assert router.supported_versions == list(versions)


def test_a_router_needs_an_agent_builder() -> None:
    with pytest.raises(ValueError, match="needs a builder"):
        VersionRouter()
    with pytest.raises(ValueError, match="client"):
        VersionRouter(v1=ConnectionBuilder(role="client"))
    VersionRouter(v2=ConnectionBuilder())  # untyped is fine


def test_unsupported_protocol_version_error_has_the_v2_schema_shape() -> None:
    error = RequestError.unsupported_protocol_version(0, [1, 2])
    assert error.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION == -32022
    assert error.to_wire() == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"requested": 0, "supported": [1, 2]},
    }


# -- the route a version takes, and what its handlers see ----------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("versions", "requested", "selected"),
    [((1, 2), 1, 1), ((1, 2), 2, 2), ((1, 2), 3, 2), ((1,), 0, 1), ((1,), 2, 1), ((2,), 9, 2)],
)
async def test_initialize_goes_to_the_chosen_version_and_later_messages_follow_it(
    versions: tuple[int, ...], requested: int, selected: int
) -> None:
    agents = Agents(*versions)
    async with served(agents.router) as peer:
        await peer.send(initialize(0, requested, info=INFO))
        assert await peer.receive() == answer(0, selected)
        await peer.send(request(1, "session/new", {"cwd": "/"}))
        await peer.send(notification("session/cancel", {"sessionId": "s"}))
        assert await peer.receive() == answer(1, selected, "session/new")
        await peer.receive_nothing_until_barrier()
    chosen = agents.v1 if selected == 1 else agents.v2
    other = agents.v2 if selected == 1 else agents.v1
    assert [method for method, _ in chosen.calls] == ["initialize", "session/new", "session/cancel"]
    assert chosen.calls[0][1] == {"protocolVersion": selected, **chosen_info(requested, selected)}
    assert other.calls == []


def chosen_info(requested: int, selected: int) -> dict[str, Any]:
    """What the chosen handlers see besides protocolVersion for ``initialize(info=INFO)``."""
    if selected == 1 and requested >= 2:  # a v2 request served by v1: translated
        return {"clientCapabilities": V1_CAPABILITIES, "clientInfo": INFO}
    return {"info": INFO}


V1_CAPABILITIES = {
    "fs": {"readTextFile": False, "writeTextFile": False},
    "terminal": False,
    "session": {"configOptions": {"boolean": {}}},
    "plan": {},
    "auth": {"terminal": False},
}


@pytest.mark.anyio
async def test_an_initialize_that_needs_no_rewrite_is_handed_over_byte_for_byte() -> None:
    agents = Agents(1, 2)
    ours, theirs = memory_pair()
    text = b'{"id": 7, "jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": 1}}'
    await theirs.send(text)
    routed = await agents.router.accept(ours)
    assert routed is not None and routed.protocol_version == 1
    assert routed.builder is not None
    assert await routed.transport.receive() == text
    await theirs.send(b"next")
    assert await routed.transport.receive() == b"next"
    await routed.transport.aclose()


@pytest.mark.anyio
async def test_a_float_protocol_version_counts_and_the_handler_sees_an_integer() -> None:
    agents = Agents(1, 2)
    async with served(agents.router) as peer:
        await peer.send(
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2.0,"info":{"name":"c","version":"1"}}}'
        )
        assert await peer.receive() == answer(1, 2)
    [(_, params)] = agents.v2.calls
    assert json.dumps(params) == '{"protocolVersion": 2, "info": {"name": "c", "version": "1"}}'


@pytest.mark.anyio
async def test_no_rerouting_a_second_initialize_goes_to_the_chosen_version() -> None:
    agents = Agents(1, 2)
    async with served(agents.router) as peer:
        await peer.send(initialize(1, 1))
        await peer.send(initialize(2, 2, info=INFO))
        assert [await peer.receive(), await peer.receive()] == [answer(1, 1), answer(2, 1)]
    assert agents.v1.calls[1] == ("initialize", {"protocolVersion": 2, "info": INFO})
    assert agents.v2.calls == []


@pytest.mark.anyio
async def test_the_v1_route_accepts_a_null_initialize_id_the_v2_route_does_not() -> None:
    agents = Agents(1, 2)
    async with served(agents.router) as peer:
        await peer.send(initialize(None, 2, info=INFO))
        assert await peer.receive() == error(None, -32600, "Invalid request", V2_IDS)
        await peer.send(initialize("init", 2, info=INFO))  # the connection is still waiting
        assert await peer.receive() == answer("init", 2)
    async with served(Agents(1, 2).router) as peer:
        await peer.send(initialize(None, 1))
        assert await peer.receive() == answer(None, 1)


# -- before initialize ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_other_requests_before_initialize_get_32600_and_the_connection_stays_open() -> None:
    agents = Agents(1, 2)
    async with served(agents.router) as peer:
        await peer.send(request(1, "session/new", {"cwd": "/"}))
        await peer.send(request("x", "initialize/not"))
        assert await peer.receive() == error(1, -32600, "Invalid request", FIRST)
        assert await peer.receive() == error("x", -32600, "Invalid request", FIRST)
        await peer.send(initialize(2, 1))
        assert await peer.receive() == answer(2, 1)
    assert [method for method, _ in agents.v1.calls] == ["initialize"]


@pytest.mark.anyio
async def test_notifications_and_responses_before_initialize_are_ignored() -> None:
    agents = Agents(1, 2)
    async with served(agents.router) as peer:
        for ignored in [
            notification("session/cancel", {"sessionId": "s"}),
            cancel(1),
            notification("$/cancel_request"),  # malformed, still only a notification
            result(1, None),
            error(2, -32603, "Internal error"),
            {"jsonrpc": "2.0", "id": 3},  # response-shaped, however malformed
            {"result": 4},
            {"error": "x", "id": None},
        ]:
            await peer.send(ignored)
        await peer.receive_nothing_until_barrier()  # the barrier: -32700 from the router
        await peer.send(initialize(1, 1))
        assert await peer.receive() == answer(1, 1)
        await peer.receive_nothing_until_barrier()  # the barrier: -32700 from the connection
    assert agents.v1.calls == [("initialize", {"protocolVersion": 1})]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ([], "empty batch"),
        ([initialize(1, 1)], "batches are not supported"),
        (5, "message is not a JSON object"),
        ({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}}, None),
        ({"jsonrpc": "2.0", "method": 5, "id": 1}, None),
        (
            {"jsonrpc": "2.0", "id": 1.5, "method": "initialize", "params": {"protocolVersion": 1}},
            None,
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": True,
                "method": "initialize",
                "params": {"protocolVersion": 1},
            },
            None,
        ),
        ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": 5}, None),
        ({"jsonrpc": "2.0", "method": "x", "result": 1}, None),
        ({"jsonrpc": "2.0"}, None),
    ],
)
async def test_batches_and_invalid_messages_get_32600_with_a_null_id(
    message: JsonValue, reason: str | None
) -> None:
    async with served(Agents(1, 2).router) as peer:
        await peer.send(message)
        reply = await peer.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32600
        assert reason is None or reply["error"]["data"] == reason
        await peer.send(initialize(1, 1))
        assert await peer.receive() == answer(1, 1)


@pytest.mark.anyio
async def test_unparsable_json_before_initialize_gets_32700() -> None:
    async with served(Agents(1, 2).router) as peer:
        await peer.send(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"')
        reply = await peer.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32700
        assert reply["error"]["data"]["line"].startswith('{"jsonrpc"')


@pytest.mark.anyio
@pytest.mark.parametrize(
    "params",
    [
        {"protocolVersion": "1"},
        {"protocolVersion": -1},
        {"protocolVersion": 65536},
        {"protocolVersion": 1.5},
        {"protocolVersion": True},
        {"protocolVersion": None},
        {"info": INFO},
        [1],
        None,
    ],
    ids=[
        "string",
        "negative",
        "too-large",
        "fraction",
        "bool",
        "null",
        "missing",
        "array",
        "no-params",
    ],
)
async def test_an_invalid_protocol_version_gets_32602_and_initialize_may_follow(
    params: JsonValue,
) -> None:
    async with served(Agents(1, 2).router) as peer:
        await peer.send(request(4, "initialize", params))
        assert await peer.receive() == error(4, -32602, "Invalid params", BAD_VERSION)
        await peer.send(initialize(5, 2, info=INFO))
        assert await peer.receive() == answer(5, 2)


@pytest.mark.anyio
@pytest.mark.parametrize(("versions", "requested"), [((1, 2), 0), ((2,), 0), ((2,), 1)])
async def test_an_unsupported_version_gets_32022_with_requested_and_supported(
    versions: tuple[int, ...], requested: int
) -> None:
    async with served(Agents(*versions).router) as peer:
        await peer.send(initialize("a", requested))
        expected = {"requested": requested, "supported": list(versions)}
        assert await peer.receive() == error("a", -32022, "Unsupported protocol version", expected)
        await peer.send(initialize("b", 2, info=INFO))
        assert await peer.receive() == answer("b", 2)


class _OneTooLarge:
    """A transport whose first receive reports a skipped over-limit message."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self._raised = False

    async def receive(self) -> bytes:
        if not self._raised:
            self._raised = True
            raise MessageTooLarge(64, b'{"jsonrpc":"2.0","id":1')
        return await self.inner.receive()

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.anyio
async def test_a_message_too_large_before_initialize_gets_32600_and_reading_goes_on() -> None:
    ours, theirs = memory_pair()
    peer = WirePeer(theirs)
    async with anyio.create_task_group() as tg:
        tg.start_soon(Agents(1).router.serve, _OneTooLarge(ours))
        assert await peer.receive() == error(
            None, -32600, "Invalid request", {"reason": "message_too_large", "limit": 64}
        )
        await peer.send(initialize(1, 1))
        assert await peer.receive() == answer(1, 1)
        peer.close()


# -- races right behind initialize -----------------------------------------------------------


@pytest.mark.anyio
async def test_a_cancel_right_behind_initialize_reaches_the_initialize_handler() -> None:
    agents = Agents(1, 2)
    ours, theirs = memory_pair()
    peer = WirePeer(theirs)
    # Both are queued before the router reads anything: the cancel is the chosen
    # connection's, not the router's, to handle.
    await peer.send(initialize(1, 2, info=INFO, park=True))
    await peer.send(cancel(1))
    await peer.send(request(2, "session/new"))
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agents.router.serve, ours)
            replies = [await peer.receive(), await peer.receive()]
            peer.close()
    assert sorted(replies, key=lambda r: r["id"]) == [
        error(1, -32800, "Request cancelled"),
        answer(2, 2, "session/new"),
    ]
    assert [method for method, _ in agents.v2.calls] == [
        "initialize",
        "$/cancel_request",
        "session/new",
    ]


@pytest.mark.anyio
async def test_a_cancel_before_initialize_is_not_remembered() -> None:
    agents = Agents(1, 2)
    async with served(agents.router) as peer:
        await peer.send(cancel(1))
        await peer.send(initialize(1, 1, park=True))
        await peer.receive_nothing_until_barrier()  # parked, not cancelled
        await peer.send(cancel(1))
        assert await peer.receive() == error(1, -32800, "Request cancelled")
    assert [method for method, _ in agents.v1.calls] == ["initialize", "$/cancel_request"]


@pytest.mark.anyio
async def test_a_request_right_behind_initialize_is_the_chosen_connections() -> None:
    """The router stops reading at initialize: what the peer sent behind it, even in the
    same burst, is handled by the chosen connection and never rejected as "first"."""
    agents = Agents(1, 2)
    ours, theirs = memory_pair()
    peer = WirePeer(theirs)
    await peer.send(request(0, "session/new"))
    await peer.send(initialize(1, 1))
    await peer.send(request(2, "session/new"))
    await peer.send(initialize(3, 2, info=INFO))
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agents.router.serve, ours)
            replies = [await peer.receive() for _ in range(4)]
            peer.close()
    assert replies == [
        error(0, -32600, "Invalid request", FIRST),
        answer(1, 1),
        answer(2, 1, "session/new"),
        answer(3, 1),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("seed", range(20))
async def test_random_traffic_before_initialize_gets_the_router_answers_in_order(
    seed: int,
) -> None:
    rng = random.Random(seed)
    versions = rng.choice([(1,), (2,), (1, 2)])
    agents = Agents(*versions)
    router = agents.router
    sent: list[JsonValue | bytes] = []
    expected: list[Any] = []
    for i in range(rng.randrange(12)):
        kind = rng.randrange(6)
        if kind == 0:
            sent.append(request(i, "session/new"))
            expected.append(error(i, -32600, "Invalid request", FIRST))
        elif kind == 1:
            sent.append(rng.choice([cancel(i), notification("x"), result(i, 1), {"id": i}]))
        elif kind == 2:
            sent.append([])
            expected.append(error(None, -32600, "Invalid request", "empty batch"))
        elif kind == 3:
            sent.append(initialize(i, rng.choice(["2", 1.5, -3, None])))
            expected.append(error(i, -32602, "Invalid params", BAD_VERSION))
        elif kind == 4 and router.select(0) is None:
            sent.append(initialize(i, 0))
            data = {"requested": 0, "supported": list(versions)}
            expected.append(error(i, -32022, "Unsupported protocol version", data))
        else:
            sent.append(b"not json")
            expected.append(error(None, -32700, "Parse error", {"line": "not json"}))
    requested = rng.choice([1, 2, 3])
    selected = router.select(requested)
    if selected is None:
        requested, selected = 2, 2
    sent += [initialize("init", requested, info=INFO), request("next", "session/new")]
    expected += [answer("init", selected), answer("next", selected, "session/new")]
    ours, theirs = memory_pair()
    peer = WirePeer(theirs)
    split = rng.randrange(len(sent) + 1)  # part before the router starts, part after
    for message in sent[:split]:
        await peer.send(message)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(router.serve, ours)
            for message in sent[split:]:
                if rng.random() < 0.5:
                    await anyio.lowlevel.checkpoint()
                await peer.send(message)
            replies = [await peer.receive() for _ in expected]
            await peer.receive_nothing_until_barrier()
            peer.close()
    assert replies == expected


# -- ending before or right after initialize -------------------------------------------------


@pytest.mark.anyio
async def test_eof_before_initialize_ends_serve_and_closes_the_transport() -> None:
    agents = Agents(1, 2)
    ours, theirs = memory_pair()
    await theirs.send(json.dumps(request(1, "session/new")).encode())
    theirs.close_send()
    with anyio.fail_after(5):
        await agents.router.serve(ours)
        assert json.loads(await theirs.receive()) == error(1, -32600, "Invalid request", FIRST)
        with pytest.raises(anyio.EndOfStream):
            await theirs.receive()  # closed by the router
    assert agents.v1.calls == agents.v2.calls == []


@pytest.mark.anyio
async def test_accept_returns_none_and_connect_raises_end_of_stream_at_eof_before_initialize() -> (
    None
):
    router = Agents(1, 2).router
    for _ in range(2):
        ours, theirs = memory_pair()
        theirs.close_send()
        with anyio.fail_after(5):
            assert await router.accept(ours) is None
    ours, theirs = memory_pair()
    theirs.close_send()
    with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
        async with router.connect(ours):
            pytest.fail("connected without initialize")


@pytest.mark.anyio
async def test_cancelling_a_router_waiting_for_initialize_closes_the_transport() -> None:
    ours, theirs = memory_pair()
    with anyio.fail_after(5):
        with anyio.move_on_after(0.05):
            await Agents(1, 2).router.serve(ours)
        with pytest.raises(anyio.EndOfStream):
            await theirs.receive()


class _Broken:
    """A transport that fails on receive or on send."""

    def __init__(self, fail_on: str, inner: Transport) -> None:
        self.fail_on = fail_on
        self.inner = inner
        self.closed = False

    async def receive(self) -> bytes:
        if self.fail_on == "receive":
            raise anyio.BrokenResourceError
        return await self.inner.receive()

    async def send(self, message: bytes) -> None:
        raise anyio.BrokenResourceError

    async def aclose(self) -> None:
        self.closed = True


@pytest.mark.anyio
@pytest.mark.parametrize("fail_on", ["receive", "send"])
async def test_a_transport_failing_before_initialize_ends_the_route_quietly(fail_on: str) -> None:
    ours, theirs = memory_pair()
    await theirs.send(json.dumps(request(1, "session/new")).encode())
    broken = _Broken(fail_on, ours)
    with anyio.fail_after(5):
        assert await Agents(1, 2).router.accept(broken) is None
    assert broken.closed


@pytest.mark.anyio
async def test_eof_right_behind_initialize_still_gets_its_answer() -> None:
    ours, theirs = memory_pair()
    await theirs.send(json.dumps(initialize(1, 2, info=INFO)).encode())
    theirs.close_send()
    with anyio.fail_after(5):
        await Agents(1, 2).router.serve(ours)
        assert json.loads(await theirs.receive()) == answer(1, 2)
        with pytest.raises(anyio.EndOfStream):
            await theirs.receive()


@pytest.mark.anyio
async def test_connect_yields_the_chosen_connection_and_closing_settles_its_requests() -> None:
    agents = Agents(1, 2)
    ours, theirs = memory_pair()
    peer = WirePeer(theirs)
    await peer.send(initialize(1, 1))
    with anyio.fail_after(5):
        async with agents.router.connect(ours) as cx:
            assert await peer.receive() == answer(1, 1)
            permission = cx.send_raw_request("session/request_permission", {"sessionId": "s"})
            assert (await peer.receive())["method"] == "session/request_permission"
            peer.close()
            with pytest.raises(RequestError) as closed:
                await permission
    assert closed.value.is_connection_closed


class _WithSendNowait:
    """A transport with one fast path, ``send_nowait``, which records and declines."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.offered: list[bytes] = []

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def send_nowait(self, message: bytes) -> bool:
        self.offered.append(message)
        return False


@pytest.mark.anyio
async def test_the_routed_transport_offers_the_inner_transports_fast_paths_only() -> None:
    ours, theirs = memory_pair()
    await theirs.send(json.dumps(initialize(1, 1)).encode())
    inner = _WithSendNowait(ours)
    with anyio.fail_after(5):
        routed = await Agents(1).router.accept(inner)
        assert routed is not None
        assert not hasattr(routed.transport, "send_many")
        assert not hasattr(routed.transport, "set_eager_receiver")
        theirs.close_send()
        await routed.serve()
        assert json.loads(await theirs.receive()) == answer(1, 1)
    assert [json.loads(m) for m in inner.offered] == [answer(1, 1)]


# -- the params rewrite, case by case (the interop tests hold it against the TS router) --------


@pytest.mark.parametrize(
    ("params", "requested", "selected", "expected"),
    [
        # the requested version is served: unchanged but for an integer protocolVersion
        ({"protocolVersion": 1, "x": [1]}, 1, 1, {"protocolVersion": 1, "x": [1]}),
        ({"protocolVersion": 1.0}, 1, 1, {"protocolVersion": 1}),
        (
            {"protocolVersion": 0, "clientInfo": INFO},
            0,
            1,
            {"protocolVersion": 1, "clientInfo": INFO},
        ),
        ({"protocolVersion": 2, "info": 5}, 2, 2, {"protocolVersion": 2, "info": 5}),
        # a newer request served by v2: lenient, unknown fields dropped
        (
            {
                "protocolVersion": 3,
                "info": INFO,
                "capabilities": {"auth": {}},
                "_meta": {"k": 1},
                "new": 1,
            },
            3,
            2,
            {"protocolVersion": 2, "info": INFO, "capabilities": {"auth": {}}, "_meta": {"k": 1}},
        ),
        (
            {"protocolVersion": 3, "info": {"name": "c"}, "capabilities": 5, "_meta": []},
            3,
            2,
            {"protocolVersion": 2, "info": {"name": "unknown", "version": "unknown"}},
        ),
        (
            {"protocolVersion": 4, "info": {**INFO, "title": "T", "_meta": {"m": 1}, "extra": 1}},
            4,
            2,
            {"protocolVersion": 2, "info": {**INFO, "title": "T", "_meta": {"m": 1}}},
        ),
        (
            {"protocolVersion": 4, "info": {**INFO, "title": 5, "_meta": 5}},
            4,
            2,
            {"protocolVersion": 2, "info": INFO},
        ),
        # a v2 request served by v1 (a v1-only router): translated
        (
            {"protocolVersion": 2},
            2,
            1,
            {"protocolVersion": 1, "clientCapabilities": V1_CAPABILITIES},
        ),
        (
            {
                "protocolVersion": 3,
                "info": INFO,
                "capabilities": {
                    "auth": {"terminal": {}, "_meta": {"a": 1}},
                    "elicitation": {"form": {}},
                    "_meta": {"c": 1},
                },
                "_meta": {"t": 1},
                "clientCapabilities": {"terminal": True},  # v1 fields mean nothing in v2
            },
            3,
            1,
            {
                "protocolVersion": 1,
                "clientCapabilities": {
                    **V1_CAPABILITIES,
                    "auth": {"terminal": True, "_meta": {"a": 1}},
                    "elicitation": {"form": {}},
                    "_meta": {"c": 1},
                },
                "clientInfo": INFO,
                "_meta": {"t": 1},
            },
        ),
        (
            {"protocolVersion": 2, "info": "x", "capabilities": {"auth": {"terminal": True}}},
            2,
            1,
            {"protocolVersion": 1, "clientCapabilities": V1_CAPABILITIES},
        ),
    ],
)
def test_initialize_params_for_the_chosen_version(
    params: dict[str, JsonValue], requested: int, selected: int, expected: dict[str, JsonValue]
) -> None:
    before = json.dumps(params)
    assert initialize_params_for(params, requested, selected) == expected
    assert json.dumps(params) == before  # never edited in place
    if json.dumps(expected) == before:
        assert initialize_params_for(params, requested, selected) is params
