"""PermissionBroker: the chosen option, a cancelled turn, standing answers."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import ConnectionBuilder
from acp_runtime.contrib import PermissionBroker, PermissionDecision
from acp_runtime.testing import WirePeer, result, wire_connection

pytestmark = pytest.mark.anyio

ALLOW = v1.PermissionOption(option_id="allow", name="Allow", kind="allow_once")
ALWAYS = v1.PermissionOption(option_id="always", name="Always", kind="allow_always")
REJECT = v1.PermissionOption(option_id="reject", name="Reject", kind="reject_once")
OPTIONS = (ALLOW, ALWAYS, REJECT)


async def ask_and_answer(
    broker: PermissionBroker, client: WirePeer, outcome: dict[str, Any], **kw: Any
) -> tuple[PermissionDecision[v1.PermissionOption], dict[str, Any]]:
    decisions: list[PermissionDecision[v1.PermissionOption] | Exception] = []

    async def ask() -> None:
        try:
            decisions.append(
                await broker.ask(
                    session_id="s1",
                    tool_call=b.tool_call_update(tool_call_id="t1"),
                    options=OPTIONS,
                    **kw,
                )
            )
        except Exception as exc:
            decisions.append(exc)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            asked = await client.receive()
            await client.send(result(asked["id"], {"outcome": outcome}))
    [decision] = decisions
    if isinstance(decision, Exception):
        raise decision
    return decision, asked


async def test_the_chosen_option_is_returned() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        broker = PermissionBroker(v1.RemoteClient(cx))
        decision, asked = await ask_and_answer(
            broker, client, {"outcome": "selected", "optionId": "reject"}
        )
        assert asked["method"] == "session/request_permission"
        assert asked["params"]["toolCall"] == {"toolCallId": "t1"}
        assert [o["optionId"] for o in asked["params"]["options"]] == ["allow", "always", "reject"]
        assert decision.option is REJECT
        assert (decision.allowed, decision.cancelled, decision.always) == (False, False, False)


async def test_a_cancelled_outcome_is_a_cancelled_decision() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        broker = PermissionBroker(v1.RemoteClient(cx))
        decision, _ = await ask_and_answer(broker, client, {"outcome": "cancelled"})
        assert decision.cancelled
        assert decision.option is None
        assert not decision.allowed


async def test_an_always_answer_stands_for_its_key() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        broker = PermissionBroker(v1.RemoteClient(cx))
        first, _ = await ask_and_answer(
            broker, client, {"outcome": "selected", "optionId": "always"}, remember="edit"
        )
        assert first.allowed and first.always
        again = await broker.ask(session_id="s1", tool_call=None, options=OPTIONS, remember="edit")
        assert again.option is ALWAYS
        await client.receive_nothing_until_barrier()  # not asked again
        broker.forget("edit")
        asked_again, _ = await ask_and_answer(
            broker, client, {"outcome": "selected", "optionId": "allow"}, remember="edit"
        )
        assert asked_again.option is ALLOW


async def test_a_once_answer_does_not_stand() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        broker = PermissionBroker(v1.RemoteClient(cx))
        await ask_and_answer(
            broker, client, {"outcome": "selected", "optionId": "allow"}, remember="k"
        )
        decision, asked = await ask_and_answer(
            broker, client, {"outcome": "cancelled"}, remember="k"
        )
        assert asked["method"] == "session/request_permission"
        assert decision.cancelled


async def test_an_option_the_client_made_up_is_refused() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        broker = PermissionBroker(v1.RemoteClient(cx))
        with pytest.raises(ValueError, match="'nope', which is not one of the options"):
            await ask_and_answer(broker, client, {"outcome": "selected", "optionId": "nope"})
