"""End to end over real pipes: a client, ``examples/proxy.py`` and ``examples/echo_agent.py``,
three processes all built on this SDK (PROXY-1, PROXY-4). And a chain of five proxies.

The client calls the proxy's own ``_example_proxy/ping`` twice first, so its ids and the
proxy's downstream ids differ: a tunnelled (foreign) id would show in the traces.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from acp_generated.v1 import (
    ClientCapabilities,
    ClientHandler,
    InitializeRequest,
    NewSessionRequest,
    PromptRequest,
    PromptResponse,
    SessionNotification,
    TextContentBlock,
)
from acp_runtime import (
    Connection,
    ConnectionBuilder,
    ErrorCode,
    RequestError,
    SentRequest,
    spawn_agent,
)
from acp_runtime.tracing import TraceEvent, TracingTransport

from .wire_trace import Hop

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STARTUP_TIMEOUT = 30  # three Python processes start on a shared, busy machine
STEP_TIMEOUT = 10


def proxy_command(trace_dir: Path, agent: list[str]) -> list[str]:
    return [sys.executable, str(EXAMPLES / "proxy.py"), "--trace-dir", str(trace_dir), "--", *agent]


ECHO_AGENT = [sys.executable, str(EXAMPLES / "echo_agent.py"), "--quiet"]


class QuietClient(ClientHandler):
    async def session_update(self, params: SessionNotification, cx: Connection) -> None:
        pass


@asynccontextmanager
async def client_session(
    command: list[str], events: list[TraceEvent]
) -> AsyncGenerator[tuple[Connection, str]]:
    builder = ConnectionBuilder(role="client")
    QuietClient().attach(builder)
    async with spawn_agent(command, stderr="discard") as process:
        async with builder.connect(TracingTransport(process, events.append)) as cx:
            with anyio.fail_after(STARTUP_TIMEOUT):
                await cx.send_request(
                    InitializeRequest(protocol_version=1, client_capabilities=ClientCapabilities())
                )
                for n in range(2):  # answered by the (first) proxy itself
                    pong = await cx.send_raw_request("_example_proxy/ping", {"n": n})
                    assert isinstance(pong, dict) and pong["pong"] == {"n": n}
                new = await cx.send_request(NewSessionRequest(cwd=str(Path.cwd()), mcp_servers=[]))
            yield cx, new.session_id


def prompt(cx: Connection, session_id: str, text: str) -> SentRequest[PromptResponse]:
    return cx.send_request(
        PromptRequest(session_id=session_id, prompt=[TextContentBlock(type="text", text=text)])
    )


async def cancelled_outcome(sent: SentRequest[PromptResponse]) -> str:
    """-32800, or the data if it raced ahead (OUT-3); anything else fails."""
    with anyio.fail_after(STEP_TIMEOUT):
        try:
            response = await sent
        except RequestError as error:
            assert error.code == ErrorCode.REQUEST_CANCELLED, error
            return "cancelled-error"
    return f"data:{response.stop_reason}"


async def test_e2e_client_proxy_agent_cancel_crosses_each_hop_with_its_own_id(
    tmp_path: Path,
) -> None:
    """PROXY-1/PROXY-4 over pipes: the client cancels a slow prompt; the proxy sends its own
    ``$/cancel_request`` downstream with the downstream id; the client gets -32800; no
    hop's trace carries a foreign id."""
    client_events: list[TraceEvent] = []
    async with client_session(proxy_command(tmp_path, ECHO_AGENT), client_events) as (
        cx,
        session_id,
    ):
        slow = prompt(cx, session_id, "sleep 20000")
        slow.cancel()
        assert await cancelled_outcome(slow) == "cancelled-error"
        with anyio.fail_after(STEP_TIMEOUT):  # the chain still works after the cancel
            assert (await prompt(cx, session_id, "hello")).stop_reason == "end_turn"

    client = Hop.from_events(client_events)
    upstream = Hop.from_jsonl(tmp_path / "upstream.jsonl")  # the proxy's side of the client hop
    downstream = Hop.from_jsonl(tmp_path / "downstream.jsonl")  # the proxy's side of the agent hop

    client_id = slow.id
    assert client.cancels("out") == [client_id]
    assert upstream.cancels("in") == [client_id]
    assert upstream.responses("out", client_id)[0]["error"]["code"] == -32800

    down_prompt = downstream.requests("out", "session/prompt")[0]  # the slow one
    down_id = down_prompt["id"]
    assert down_id != client_id
    assert downstream.cancels("out") == [down_id]
    assert downstream.responses("in", down_id)[0]["error"]["code"] == -32800
    for hop in (client, upstream, downstream):
        assert hop.foreign_cancels() == []


@pytest.mark.slow
async def test_e2e_chain_of_five_proxy_processes(tmp_path: Path) -> None:
    """PROXY-1 through five proxy processes: every hop sees exactly one cancel, for its id."""
    command = ECHO_AGENT
    for depth in reversed(range(5)):
        command = proxy_command(tmp_path / f"proxy{depth}", command)
    client_events: list[TraceEvent] = []
    async with client_session(command, client_events) as (cx, session_id):
        slow = prompt(cx, session_id, "sleep 20000")
        slow.cancel()
        assert await cancelled_outcome(slow) == "cancelled-error"
    for depth in range(5):
        for side in ("upstream", "downstream"):
            hop = Hop.from_jsonl(tmp_path / f"proxy{depth}" / f"{side}.jsonl")
            direction = "in" if side == "upstream" else "out"
            (cancel_id,) = hop.cancels(direction)
            (prompt_request,) = hop.requests(direction, "session/prompt")
            assert cancel_id == prompt_request["id"]
            assert hop.foreign_cancels() == []
