"""A worker killed (SIGKILL) mid-session: its connections fail cleanly, and HAProxy sends
new connections to the live worker.

Over Streamable HTTP HAProxy cuts the SSE streams it was relaying (an incomplete chunked
body), over WebSocket the socket (no close frame): either way the client's transport
fails, and every request in flight settles with the connection-closed error, within
milliseconds here (bounded by ``fail_after``). A new connection's ``initialize`` that
round robin gives to the dead worker is refused there and redispatched (``option
redispatch``), so it works before the health check has marked the worker down."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import ConnectionBuilder, RequestError
from tests.interop.node_peers import PEERS_DIR

from .client import transport_to, visit
from .cluster import Cluster, running_cluster

pytestmark = pytest.mark.anyio

SLEEP = "sleep 30000"
"""A prompt the worker holds for 30 s: in flight when the worker dies."""


@pytest.fixture
def pair(haproxy: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Two workers of their own: the test kills one."""
    with running_cluster(2, tmp_path_factory.mktemp("pair"), haproxy=haproxy) as running:
        yield running


@pytest.mark.parametrize("scheme", ["http", "ws"])
async def test_a_killed_worker_settles_its_requests_and_new_connections_work(
    pair: Cluster, scheme: str
) -> None:
    url = pair.http_url if scheme == "http" else pair.ws_url
    failures: list[RequestError] = []
    with anyio.fail_after(20):
        async with transport_to(url) as transport:
            async with ConnectionBuilder(role="client").connect(transport) as cx:
                agent = v1.RemoteAgent(cx)
                init = await agent.initialize(protocol_version=1)
                assert init.agent_info is not None
                victim = pair.worker_named(init.agent_info.name)
                sessions = [
                    (await agent.new_session(cwd="/", mcp_servers=[])).session_id for _ in range(2)
                ]

                async def prompt(session_id: str) -> None:
                    with pytest.raises(RequestError) as failure:
                        await agent.prompt(session_id=session_id, prompt=[b.text(text=SLEEP)])
                    failures.append(failure.value)

                async with anyio.create_task_group() as tg:
                    for session_id in sessions:
                        tg.start_soon(prompt, session_id)
                    await anyio.sleep(0.3)  # both prompts are in flight on the worker
                    pair.kill(victim)
                    killed = anyio.current_time()
                settled_in = anyio.current_time() - killed
    assert settled_in < 5, f"settled {settled_in:.1f} s after the kill"
    assert len(failures) == 2 and all(f.is_connection_closed for f in failures), failures
    (survivor,) = [w for w in pair.workers if w is not victim]
    with anyio.fail_after(20):
        for _ in range(3):  # round robin names the dead worker for one of them at least
            seen = await visit(url, ["whoami"])
            assert pair.worker_named(seen.agent_name) is survivor
            assert seen.answers == [f"pid {survivor.pid}"]


KILLED_WORKER_CLIENT = PEERS_DIR / "killed_worker_client.mjs"


@pytest.mark.interop
@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_the_ts_client_settles_its_prompt_when_its_worker_is_killed(
    node: str, pair: Cluster, scheme: str
) -> None:
    """The TypeScript SDK's client (2.4.0) too: its prompt in flight rejects at once
    (over HTTP with fetch's ``terminated``, over WebSocket ``ACP connection closed``)."""
    url = pair.http_url if scheme == "http" else pair.ws_url
    with subprocess.Popen(
        [node, str(KILLED_WORKER_CLIENT), url], stdout=subprocess.PIPE, text=True
    ) as client:
        assert client.stdout is not None
        ready = json.loads(client.stdout.readline())
        time.sleep(0.3)  # the prompt is in flight on the worker
        pair.kill(pair.worker_named(ready["agentName"]))
        out, _ = client.communicate(timeout=20)
    outcome = json.loads(out)
    assert outcome["settled"] == "error", outcome
    assert outcome["ms"] < 5000, outcome
