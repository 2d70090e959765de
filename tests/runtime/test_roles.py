"""Roles and typed bindings: registration and send checks, typed round trips."""

from __future__ import annotations

from typing import ClassVar

import anyio
import pytest
from pydantic import BaseModel

from acp_runtime import Connection, ConnectionBuilder, NotificationMethod, RequestMethod, Responder
from acp_runtime._roles import Role
from acp_runtime.codegen_support import TypedRequest
from acp_runtime.testing import wire_connection

from .helpers import ASK, NOTE, Answer, Ask, Note, connected, notification, request

pytestmark = pytest.mark.anyio


class Fetch(BaseModel, TypedRequest[Answer]):
    path: str
    __acp_method__: ClassVar[RequestMethod[Fetch, Answer]]


FETCH: RequestMethod[Fetch, Answer] = RequestMethod("test/fetch", Fetch, Answer, side="client")
Fetch.__acp_method__ = FETCH
PROTOCOL_NOTE: NotificationMethod[Note] = NotificationMethod("$/test_note", Note, side="protocol")


async def handle_ask(params: Ask, responder: Responder[Answer]) -> Answer:
    return Answer(text=params.question.upper())


def test_agent_cannot_register_a_client_method_and_client_cannot_register_agent_ones() -> None:
    with pytest.raises(ValueError, match="test/fetch"):
        ConnectionBuilder("agent").on_request(FETCH, handle_ask)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="test/ask"):
        ConnectionBuilder("client").on_request(ASK, handle_ask)
    ConnectionBuilder("untyped").on_request(FETCH, handle_ask)  # type: ignore[arg-type]


def test_protocol_methods_are_allowed_for_every_role() -> None:
    async def on_note(params: Note, cx: Connection) -> None:
        pass

    roles: tuple[Role, ...] = ("agent", "client", "untyped")
    for role in roles:
        ConnectionBuilder(role).on_notification(PROTOCOL_NOTE, on_note)


def test_duplicate_registration_and_unknown_role_are_rejected() -> None:
    builder = ConnectionBuilder("agent").on_request(ASK, handle_ask)
    with pytest.raises(ValueError, match="already registered"):
        builder.on_request(ASK, handle_ask)
    with pytest.raises(ValueError, match="unknown role"):
        ConnectionBuilder("conductor")  # type: ignore[arg-type]


async def test_sending_checks_that_the_peer_handles_the_method() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, peer):
        with pytest.raises(ValueError, match="test/ask"):
            cx.send_request(Ask(question="to myself?"))
        sent = cx.send_request(Fetch(path="/x"))  # the client handles fetch: fine
        assert await peer.receive() == request(sent.id, "test/fetch", {"path": "/x"})
        sent.detach()
        with pytest.raises(ValueError, match="test/note"):
            cx.send_notification(Note(text="agent-side notification"))


async def test_typed_request_and_notification_round_trip_between_two_connections() -> None:
    notes: list[Note] = []
    got_note = anyio.Event()

    async def on_note(params: Note, cx: Connection) -> None:
        notes.append(params)
        got_note.set()

    agent = ConnectionBuilder("agent").on_request(ASK, handle_ask).on_notification(NOTE, on_note)
    async with connected(ConnectionBuilder("client"), agent) as (client, _):
        with anyio.fail_after(5):
            assert await client.send_request(ASK, Ask(question="hi")) == Answer(text="HI")
            client.send_notification(Note(text="one"))
            client.send_notification(NOTE, Note(text="two"))
            await got_note.wait()
            assert await client.send_request(Ask(question="barrier")) == Answer(text="BARRIER")
        assert notes == [Note(text="one"), Note(text="two")]


async def test_notification_is_sent_with_wire_names_and_without_params_when_none() -> None:
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        cx.send_raw_notification("_x/ping")
        cx.send_notification(Note(text="t"))
        assert await peer.receive() == notification("_x/ping")
        assert await peer.receive() == notification("test/note", {"text": "t"})
