"""The client's capabilities are respected (issue 33): a typed request to the client that
needs a capability the client's ``initialize`` did not declare is refused locally."""

from __future__ import annotations

import anyio
import pytest

from acp_generated import v1
from acp_runtime import ConnectionBuilder, ErrorCode, RequestError, Responder
from acp_runtime.testing import request, result, wire_connection

pytestmark = pytest.mark.anyio


class Agent(v1.AgentHandler):
    async def initialize(
        self, params: v1.InitializeRequest, responder: Responder[v1.InitializeResponse]
    ) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)


def _agent() -> ConnectionBuilder:
    builder = ConnectionBuilder(role="agent")
    Agent().attach(builder)
    return builder


INIT = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": True}},
}


async def test_undeclared_capabilities_are_refused_before_sending() -> None:
    async with wire_connection(_agent()) as (cx, client):
        await client.send(request(0, "initialize", INIT))
        with anyio.fail_after(5):
            assert (await client.receive())["id"] == 0
        remote = v1.RemoteClient(cx)
        with pytest.raises(RequestError) as refused:
            remote.read_text_file(session_id="s1", path="/etc/hosts")
        assert refused.value.code == ErrorCode.METHOD_NOT_FOUND
        assert refused.value.is_capability_not_declared
        assert refused.value.data == {
            "reason": "capability_not_declared",
            "method": "fs/read_text_file",
            "capability": "fs.readTextFile",
        }
        assert "fs.readTextFile" in refused.value.message
        with pytest.raises(RequestError, match="terminal"):
            remote.create_terminal(session_id="s1", command="ls")
        await client.receive_nothing_until_barrier()  # nothing was sent

        sent = remote.write_text_file(session_id="s1", path="/tmp/x", content="x")
        with anyio.fail_after(5):
            assert (await client.receive())["method"] == "fs/write_text_file"
            await client.send(result(sent.id, {}))
            await sent


async def test_before_initialize_nothing_is_refused() -> None:
    async with wire_connection(_agent()) as (cx, client):
        sent = v1.RemoteClient(cx).read_text_file(session_id="s1", path="/etc/hosts")
        with anyio.fail_after(5):
            assert (await client.receive())["method"] == "fs/read_text_file"
        sent.detach()
