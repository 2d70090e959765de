"""The generated bindings and handler classes plugged into the runtime over memory pipes."""

from __future__ import annotations

import importlib

import anyio
import pytest

from acp_generated import v1, v2
from acp_runtime import (
    Connection,
    ConnectionBuilder,
    JsonValue,
    RequestError,
    Responder,
    memory_pair,
)


class EchoAgent(v1.AgentHandler):
    """Answers prompts with end_turn after streaming the prompt text back."""

    def __init__(self) -> None:
        self.cancelled = anyio.Event()

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse | None:
        first = params.prompt[0]
        assert isinstance(first, v1.TextContentBlock)
        responder.connection.send_notification(
            v1.SessionNotification(
                session_id=params.session_id,
                update=v1.AgentMessageChunkSessionUpdate(
                    session_update="agent_message_chunk", content=first
                ),
            )
        )
        return v1.PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: v1.CancelNotification, cx: Connection) -> None:
        self.cancelled.set()

    async def ext_method(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        return {"method": method, "echo": params}


class Recorder(v1.ClientHandler):
    def __init__(self) -> None:
        self.updates: list[v1.SessionNotification] = []
        self.got_update = anyio.Event()

    async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
        self.updates.append(params)
        self.got_update.set()


@pytest.mark.anyio
async def test_typed_round_trip_through_handlers() -> None:
    agent, client = EchoAgent(), Recorder()
    agent_builder, client_builder = (
        ConnectionBuilder(role="agent"),
        ConnectionBuilder(role="client"),
    )
    agent.attach(agent_builder)
    client.attach(client_builder)
    a, c = memory_pair()
    with anyio.fail_after(5):
        async with agent_builder.connect(a), client_builder.connect(c) as cx:
            prompt = v1.PromptRequest(
                session_id="s1", prompt=[v1.TextContentBlock(type="text", text="hi")]
            )
            response = await cx.send_request(prompt)
            assert response == v1.PromptResponse(stop_reason="end_turn")
            await client.got_update.wait()
            update = client.updates[0].update
            assert isinstance(update, v1.AgentMessageChunkSessionUpdate)
            assert update.content == v1.TextContentBlock(type="text", text="hi")
            cx.send_notification(v1.CancelNotification(session_id="s1"))
            await agent.cancelled.wait()


class PromptOnly(v1.AgentHandler):
    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse | None:
        return v1.PromptResponse(stop_reason="refusal")


@pytest.mark.anyio
async def test_only_overridden_methods_are_registered() -> None:
    builder = ConnectionBuilder(role="agent")
    PromptOnly().attach(builder)
    a, c = memory_pair()
    with anyio.fail_after(5):
        async with builder.connect(a), ConnectionBuilder(role="client").connect(c) as cx:
            with pytest.raises(RequestError) as info:
                await cx.send_request(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
            assert info.value.code == -32601
            with pytest.raises(RequestError) as info:
                await cx.send_raw_request("_example.com/ping", {"n": 1})
            assert info.value.code == -32601
            prompt = v1.PromptRequest(session_id="s", prompt=[])
            assert (await cx.send_request(prompt)).stop_reason == "refusal"


@pytest.mark.anyio
async def test_ext_method_receives_requests_without_a_typed_handler() -> None:
    builder = ConnectionBuilder(role="agent")
    EchoAgent().attach(builder)
    a, c = memory_pair()
    with anyio.fail_after(5):
        async with builder.connect(a), ConnectionBuilder(role="client").connect(c) as cx:
            ext = await cx.send_raw_request("_example.com/ping", {"n": 1})
            assert ext == {"method": "_example.com/ping", "echo": {"n": 1}}


def test_attach_on_base_class_registers_nothing() -> None:
    builder = ConnectionBuilder(role="agent")
    v2.AgentHandler().attach(builder)
    assert builder._routes.requests == {}  # pyright: ignore[reportPrivateUsage]
    assert builder._routes.notifications == {}  # pyright: ignore[reportPrivateUsage]
    assert builder._routes.raw_request is None  # pyright: ignore[reportPrivateUsage]


def test_request_binding_metadata() -> None:
    assert v1.SESSION_PROMPT.name == "session/prompt"
    assert v1.SESSION_PROMPT.side == "agent"
    assert v1.PromptRequest.__acp_method__ is v1.SESSION_PROMPT
    assert v1.SessionNotification.__acp_method__ is v1.SESSION_UPDATE
    assert v1.CANCEL_REQUEST.side == "protocol"
    assert v2.CancelSessionNotification.__acp_method__ is v2.SESSION_CANCEL
    assert "prompt" in v1.SESSION_PROMPT.doc.lower()


@pytest.mark.parametrize("package", ["v1", "v1.unstable", "v2", "v2.unstable"])
def test_every_binding_names_its_package_s_own_classes(package: str) -> None:
    """A binding imports its params and result types on first use (``ModelRef``), so a
    name codegen got wrong would only fail when a peer first sends that method: here every
    binding resolves, to the package's class of that name, and each params class a
    binding owns is linked back to it."""
    pkg = importlib.import_module(f"acp_generated.{package}")
    bindings = [*pkg.REQUESTS, *pkg.NOTIFICATIONS]
    assert len(bindings) > 10
    for binding in bindings:
        codecs = [binding.params, *([binding.result] if hasattr(binding, "result") else [])]
        for codec in codecs:
            tp = codec.type
            if tp is not None:
                assert getattr(pkg, tp.__name__) is tp, (binding, tp)
        owner = getattr(binding.params.type, "__dict__", {}).get("__acp_method__")
        assert owner is None or owner.name == binding.name, binding


class SlowAgent(v1.AgentHandler):
    """Hands each prompt to spawned work (IN-5) and observes ``$/cancel_request``."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.observed: list[v1.CancelRequestNotification] = []
        self.got_cancel = anyio.Event()

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse | None:
        async def work() -> None:
            self.started.set()
            await responder.cancellation.cancelled()
            responder.respond_with_error(RequestError.request_cancelled())

        responder.connection.spawn(work)
        return None

    async def cancel_request(self, params: v1.CancelRequestNotification, cx: Connection) -> None:
        self.observed.append(params)
        self.got_cancel.set()


@pytest.mark.anyio
async def test_cancel_request_hook_observes_after_the_runtime_marked_the_request() -> None:
    agent = SlowAgent()
    builder = ConnectionBuilder(role="agent")
    agent.attach(builder)
    a, c = memory_pair()
    with anyio.fail_after(5):
        async with builder.connect(a), ConnectionBuilder(role="client").connect(c) as cx:
            sent = cx.send_request(v1.PromptRequest(session_id="s", prompt=[]))
            await agent.started.wait()
            sent.cancel()
            with pytest.raises(RequestError) as info:
                await sent
            assert info.value.code == -32800
            await agent.got_cancel.wait()
            assert len(agent.observed) == 1
            assert agent.observed[0].request_id is not None
