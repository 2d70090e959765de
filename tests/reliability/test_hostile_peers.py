"""Hostile peers written without the SDK, against real processes (issue #16).

Agent side: the echo agent (``examples/echo_agent.py``, on asyncio and on trio) under a
raw client (:mod:`.hostile_peers`). Client side: a client connection in this
process under a raw agent (:mod:`.raw_agent`). Every case must end with every request
settled, a process that still answers, and memory that stays bounded:

1. an answer over the size limit fails the request its first bytes name;
2. a malformed answer settles its request with -32600;
3. a stderr nobody reads never stops the agent, and ``--quiet`` writes nothing there;
4. a peer that stops reading stops the process reading too, and a cancel is still
   answered ahead of the backlog;
5. one bad line costs its own size and a constant, not a copy of it and its text;
6. a byte-order mark at the start and white-space lines get no error, a long stream of
   chunks can be cancelled, and SIGINT ends the agent quietly.

The quick mode runs small sizes with a 1 MiB backpressure mark; ``--run-slow`` runs the
sizes of the issue with the default mark.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_runtime import ConnectionBuilder, JsonValue, RequestError, Responder, spawn_agent
from acp_runtime.transports import MessageTooLarge

from .hostile_peers import (
    MIB,
    Process,
    bad_line,
    bad_lines,
    cancel_under_load,
    chunks_then_cancel,
    flood_unread,
    initialize,
    pings,
    prompt,
    python_agent,
    quiet_stderr_bytes,
    stderr_unread,
)

# The four quick floods run once per process
pytestmark = pytest.mark.xdist_group("hostile-peers")

RAW_AGENT = Path(__file__).with_name("raw_agent.py")
BACKENDS = ["asyncio", "trio"]
QUICK_MARK = ("--high-water-bytes", str(MIB))
AGENT = python_agent()


@contextmanager
def echo_agent(backend: str, *args: str, stderr: Any = subprocess.DEVNULL) -> Iterator[Process]:
    process = AGENT.start("--backend", backend, *args, stderr=stderr)
    try:
        yield process
    finally:
        process.stop()


def permission_request(process: Process, session: str) -> dict[str, Any]:
    process.send(prompt(session, "permission"))
    request, _ = process.read_until(lambda m: m.get("method") == "session/request_permission")
    return request


# -- 1, 2: every request settles, agent side ---------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_case1_an_over_limit_answer_to_the_agents_request_ends_the_turn(backend: str) -> None:
    with echo_agent(backend, "--quiet", "--max-message-bytes", "65536") as agent:
        asked = permission_request(agent, initialize(agent))
        pad = "x" * 100_000
        agent.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"pad": pad}})
        answer, _ = agent.read_until(lambda m: m.get("id") == "turn")
        assert answer["error"]["code"] == -32600
        assert answer["error"]["data"]["reason"] == "message_too_large"
        agent.send({"jsonrpc": "2.0", "id": "ping", "method": "_echo/ping", "params": {}})
        assert agent.read()["result"] == {"pong": {}}


@pytest.mark.parametrize("backend", BACKENDS)
def test_case2_a_malformed_answer_to_the_agents_request_ends_the_turn(backend: str) -> None:
    with echo_agent(backend, "--quiet") as agent:
        asked = permission_request(agent, initialize(agent))
        outcome = {"outcome": {"outcome": "selected", "optionId": "allow"}}
        error = {"code": 1, "message": "both"}
        agent.send({"jsonrpc": "2.0", "id": asked["id"], "result": outcome, "error": error})
        answer, _ = agent.read_until(lambda m: m.get("id") == "turn")
        assert answer["error"]["code"] == -32600
        assert answer["error"]["data"]["reason"] == "malformed_response"


# -- 1, 2, 6: every request settles, client side -----------------------------------------


async def on_any_request(
    method: str, params: JsonValue, responder: Responder[JsonValue]
) -> JsonValue:
    return {"pong": params}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mode", "first", "second"),
    [
        ("too-large", "message_too_large", "ok"),
        ("malformed", "malformed_response", "ok"),
        ("bom", "ok", "ok"),
    ],
)
async def test_case1_2_6_the_clients_requests_settle_whatever_the_agent_answers(
    mode: str, first: str, second: str
) -> None:
    command = [sys.executable, str(RAW_AGENT), mode]
    async with (
        spawn_agent(command, max_message_bytes=65536, exit_timeout=0.5) as agent,
        ConnectionBuilder("client").connect(agent) as cx,
    ):
        outcomes: list[str] = []
        for method in ("initialize", "session/new"):
            with anyio.fail_after(5):
                try:
                    outcomes.append(str(await cx.send_raw_request(method, {})))
                except RequestError as error:
                    assert error.code == -32600 and isinstance(error.data, dict)
                    outcomes.append(str(error.data["reason"]))
        assert outcomes == [first, second]


@pytest.mark.anyio
async def test_case1_an_over_limit_answer_with_no_readable_id_settles_every_request() -> None:
    command = [sys.executable, str(RAW_AGENT), "too-large-no-id"]
    async with (
        spawn_agent(command, max_message_bytes=65536, exit_timeout=0.5) as agent,
        ConnectionBuilder("client").connect(agent) as cx,
    ):
        pending = [cx.send_raw_request("initialize", {}), cx.send_raw_request("other", {})]
        for request in pending:
            with anyio.fail_after(5), pytest.raises(RequestError) as failure:
                await request
            assert failure.value.is_connection_closed
        assert isinstance(cx.transport_error, MessageTooLarge)


# -- 3: a stderr nobody reads, and --quiet ------------------------------------------------


BAD_LINES = [20_000, pytest.param(300_000, marks=pytest.mark.slow)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("count", BAD_LINES)
def test_case3_quiet_writes_nothing_to_stderr(backend: str, count: int) -> None:
    assert quiet_stderr_bytes(AGENT, count, "--backend", backend) == {"stderr_bytes": 0}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("count", BAD_LINES)
def test_case3_an_agent_whose_stderr_nobody_reads_keeps_answering(backend: str, count: int) -> None:
    figures = stderr_unread(AGENT, count, "--backend", backend)
    assert figures["lines_taken"] == count
    assert figures["ping_answered_ms"] is not None and figures["ping_answered_ms"] < 5000


# -- 4: backpressure ------------------------------------------------------------------------


FLOOD_LINES = {"pings": 5_000, "bad lines": 200_000}  # more than the agent's read buffer (1 MiB)


def quick_flood(backend: str, lines: str) -> dict[str, Any]:
    count = FLOOD_LINES[lines]
    source = (lambda: pings(count)) if lines == "pings" else (lambda: bad_lines(count))
    return flood_unread(AGENT, source, "--backend", backend, *QUICK_MARK)


@pytest.fixture(scope="module")
def quick_floods() -> dict[tuple[str, str], dict[str, Any]]:
    """All four floods at once, each on its own agent process: each spends two seconds
    watching its agent take nothing, and in a row they would cost the quick mode eight."""
    keys = [(backend, lines) for backend in BACKENDS for lines in FLOOD_LINES]
    with ThreadPoolExecutor(len(keys)) as pool:
        running = {key: pool.submit(quick_flood, *key) for key in keys}
        return {key: future.result() for key, future in running.items()}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("lines", list(FLOOD_LINES))
def test_case4_an_agent_whose_client_never_reads_stops_reading_in_bounded_memory(
    backend: str, lines: str, quick_floods: dict[tuple[str, str], dict[str, Any]]
) -> None:
    figures = quick_floods[backend, lines]
    assert figures["stopped_reading"] and figures["taken"] < FLOOD_LINES[lines]
    assert figures["peak_rss_mib"] < figures["base_rss_mib"] + 16


@pytest.mark.parametrize("backend", BACKENDS)
def test_case4_a_cancel_behind_a_backlog_is_answered_ahead_of_it(backend: str) -> None:
    """5 MB of pongs queued (under the mark, so all of them): the -32800 goes first."""
    figures = cancel_under_load(AGENT, 5_000, "--backend", backend)
    assert figures["answer_code"] == -32800
    assert figures["messages_before_answer"] < 500  # about one write batch
    assert figures["cancel_to_answer_ms"] < 2000


@pytest.mark.anyio
async def test_case4_a_client_whose_agent_never_reads_stops_reading_then_catches_up() -> None:
    count, mark = 2_000, 64 * 1024
    command = [sys.executable, str(RAW_AGENT), "flood", str(count)]
    answered: list[int] = []
    near_the_mark, done = anyio.Event(), anyio.Event()

    async def on_ping(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        answered.append(len(answered))
        if responder.connection.outgoing_backlog > mark - 2048:
            near_the_mark.set()
        return {"pong": params}

    async def on_done(method: str, params: JsonValue, cx: object) -> None:
        assert params == {"answers": count}
        done.set()

    builder = (
        ConnectionBuilder("client", high_water_bytes=mark)
        .on_raw_request(on_ping)
        .on_raw_notification(on_done)
    )
    async with spawn_agent(command, exit_timeout=0.5) as agent, builder.connect(agent) as cx:
        with anyio.fail_after(10):
            await near_the_mark.wait()
        await anyio.sleep(0.3)  # time to read more, were it still reading
        held = len(answered)
        assert held < count  # stopped reading: the rest waits in the agent's pipe
        assert cx.outgoing_backlog <= mark + 2048
        os.kill(agent.pid, signal.SIGUSR1)  # the agent starts reading
        with anyio.fail_after(20):
            await done.wait()
        assert len(answered) == count


# -- 5: one bad line ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("size", [16 * MIB, pytest.param(60 * MIB, marks=pytest.mark.slow)])
def test_case5_a_bad_line_costs_its_size_and_a_constant(backend: str, size: int) -> None:
    figures = bad_line(AGENT, size, "--backend", backend)
    assert figures["reply_code"] == -32700
    # The framing's buffer becomes the line (no copy), which is parsed from its bytes
    # (no text): the line once, plus what the interpreter adds. A copy would be 2x.
    assert figures["cost_mib"] < size / MIB + 8, figures


# -- 6: small ones --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_case6_a_byte_order_mark_first_and_white_space_lines_get_no_error(backend: str) -> None:
    with echo_agent(backend, "--quiet") as agent:
        agent.write(b"\xef\xbb\xbf")
        initialize(agent)
        agent.write(b" \t \r\n   \n")
        agent.send({"jsonrpc": "2.0", "id": "ping", "method": "_echo/ping", "params": {}})
        assert agent.read() == {"jsonrpc": "2.0", "id": "ping", "result": {"pong": {}}}


@pytest.mark.parametrize("backend", BACKENDS)
def test_case6_a_long_stream_of_chunks_answers_a_ping_and_stops_when_cancelled(
    backend: str,
) -> None:
    figures = chunks_then_cancel(AGENT, 300_000, "--backend", backend)
    assert figures["stop_reason"] == "cancelled"
    assert figures["ping_ms"] < 1000 and figures["cancel_ms"] < 1000, figures
    assert figures["chunks_received"] < 300_000


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("quiet", [True, False], ids=["quiet", "logging"])
def test_case6_sigint_ends_the_agent_quietly_with_status_0(backend: str, quiet: bool) -> None:
    with echo_agent(backend, *(["--quiet"] if quiet else []), stderr=subprocess.PIPE) as agent:
        initialize(agent)  # up and serving
        agent.popen.send_signal(signal.SIGINT)
        assert agent.popen.wait(timeout=10) == 0
        assert agent.popen.stderr is not None
        stderr = agent.popen.stderr.read().decode()
    assert "Traceback" not in stderr
    assert stderr == "" if quiet else "interrupted" in stderr


# -- the sizes of the issue (--run-slow) --------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("count", [50_000, 200_000])
def test_case4_full_size_unread_pings_stay_under_64_mib_of_queued_output(count: int) -> None:
    figures = flood_unread(AGENT, lambda: pings(count))
    print(f"\n[hostile] {count:,} unread pings: {json.dumps(figures)}")
    assert figures["stopped_reading"]
    assert figures["peak_rss_mib"] < figures["base_rss_mib"] + 64


@pytest.mark.slow
def test_case4_full_size_unread_bad_lines_stay_under_64_mib_of_queued_output() -> None:
    figures = flood_unread(AGENT, lambda: bad_lines(300_000))
    print(f"\n[hostile] 300,000 unread bad lines: {json.dumps(figures)}")
    assert figures["stopped_reading"]
    assert figures["peak_rss_mib"] < figures["base_rss_mib"] + 64


@pytest.mark.slow
def test_case4_full_size_cancel_behind_50k_unread_pings() -> None:
    """The cancel comes after all 50,000 pings (1 KB pongs: 50 MB), and the agent reads it
    only once it has read them all. It stops reading at the 16 MiB mark until the peer has
    read its backlog down to the low-water mark, so by then most pongs are out, and the
    -32800 can jump only what is still queued. How much that is depends on how far the
    peer has read meanwhile: 29 to 15,700 pongs in 11 runs with runtime 0.4.2, 1,200 to
    15,200 in 9 with 0.4.1 (whose low-water mark was higher), so only "some" is asserted
    here; ``test_case4_a_cancel_behind_a_backlog_is_answered_ahead_of_it`` pins the bound
    where everything is still queued. Before backpressure it came after all 50,000."""
    figures = cancel_under_load(AGENT, 50_000)
    print(f"\n[hostile] cancel behind 50,000 unread pings: {json.dumps(figures)}")
    assert figures["answer_code"] == -32800
    assert figures["messages_before_answer"] < 50_000
    assert figures["cancel_to_answer_ms"] < 5000
