"""The Autobahn|Testsuite (``wstest``) against our WebSocket code, both roles.

``wstest`` runs on Python 2.7: ``make autobahn-setup`` installs it in a virtualenv under
``.autobahn/`` (git-ignored), and :func:`find_wstest` looks there (or at ``$ACP_WSTEST``).

- fuzzingclient: wstest connects to an echo endpoint on our own listener
  (:meth:`WebSocketApp.serve`, its accept path, upgrade and socket classes), which sends
  every text message back;
- fuzzingserver: our client transport (:func:`connect_websocket`) connects to wstest for
  each case and echoes every text message back.

Only the text cases run: binary echo (ACP is text; binary frames are ignored by design)
and compression (never negotiated) are excluded.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio
import anyio.abc

from acp_runtime.remote._websocket_client import connect_websocket
from acp_runtime.remote._websocket_frames import CLOSE_NORMAL
from acp_runtime.remote._websocket_rules import AcpSocket
from acp_runtime.remote._websocket_server import WebSocketApp

REPO: Final = Path(__file__).resolve().parents[2]
WSTEST_IN_REPO: Final = REPO / ".autobahn" / "venv" / "bin" / "wstest"

EXCLUDED_CASES: Final = ["1.2.*", "9.2.*", "9.4.*", "9.6.*", "9.8.*", "12.*", "13.*"]
"""Binary echo (1.2, 9.2, 9.4, 9.6, 9.8: ACP is text) and compression (12, 13: never
negotiated)."""

PASSING: Final = frozenset({"OK", "NON-STRICT", "INFORMATIONAL"})
"""The behaviours Autobahn counts as passed (NON-STRICT: allowed by the RFC, say invalid
UTF-8 noticed at the message's end rather than at the first bad byte)."""

MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
"""Above the largest message of the 9.x cases (16 MiB)."""


def find_wstest() -> tuple[Path | None, str]:
    """The ``wstest`` to run, or None and why it is absent."""
    named = os.environ.get("ACP_WSTEST")
    wstest = Path(named) if named else WSTEST_IN_REPO
    if wstest.is_file() and os.access(wstest, os.X_OK):
        return wstest, ""
    where = f"$ACP_WSTEST ({named})" if named else str(WSTEST_IN_REPO.relative_to(REPO))
    return None, (
        f"Autobahn|Testsuite not installed at {where}: it needs Python 2.7; "
        "`make autobahn-setup` installs it where Python 2.7 is found"
    )


def free_port() -> int:
    """A loopback port free now (for wstest's fuzzingserver, which takes its port from
    the spec, not from the system)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class Result:
    """One case's outcome from wstest's ``index.json``."""

    case: str
    behavior: str
    behavior_close: str
    description: str

    @property
    def passed(self) -> bool:
        return self.behavior in PASSING and self.behavior_close in PASSING


def read_results(outdir: Path, agent: str) -> list[Result]:
    """Every case wstest reported for ``agent``, with its description for a failure."""
    index: Mapping[str, Mapping[str, Mapping[str, str]]] = json.loads(
        (outdir / "index.json").read_text()
    )
    results = []
    for case, entry in sorted(index[agent].items(), key=lambda item: _case_key(item[0])):
        report = json.loads((outdir / entry["reportfile"]).read_text())
        results.append(
            Result(case, entry["behavior"], entry["behaviorClose"], report.get("description", ""))
        )
    return results


def _case_key(case: str) -> tuple[int, ...]:
    return tuple(int(part) for part in case.split("."))


def summary(results: list[Result]) -> str:
    """Counts per behaviour, then each failing case with its description."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.behavior] = counts.get(result.behavior, 0) + 1
    lines = [f"{len(results)} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    for result in results:
        if not result.passed:
            lines.append(
                f"  {result.case}: {result.behavior} (close {result.behavior_close}): "
                f"{result.description}"
            )
    return "\n".join(lines)


# -- fuzzingclient: wstest against an echo on our listener ---------------------------------


class EchoApp(WebSocketApp):
    """The listener's socket with an echo in place of the ACP rules: every text message
    goes back as it came, until the peer closes (or breaks the protocol)."""

    def __init__(self) -> None:
        super().__init__(
            lambda: None,  # never called: ``run`` serves no ACP connection
            path=None,
            max_message_bytes=MAX_MESSAGE_BYTES,
            stall_timeout=None,
        )

    async def run(self, socket: AcpSocket) -> None:
        try:
            while True:
                message = await socket.receive()
                await socket.send_text(message.decode())
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        await socket.close(CLOSE_NORMAL, None)


async def fuzz_listener(wstest: Path, workdir: Path, agent: str) -> list[Result]:
    """Run wstest's fuzzingclient against :class:`EchoApp` served on a free loopback port."""
    async with anyio.create_task_group() as group:
        port = await group.start(EchoApp().serve, "127.0.0.1", 0)
        spec = {
            "outdir": str(workdir),
            "servers": [{"agent": agent, "url": f"ws://127.0.0.1:{port}"}],
            "cases": ["*"],
            "exclude-cases": EXCLUDED_CASES,
            "exclude-agent-cases": {},
        }
        (workdir / "fuzzingclient.json").write_text(json.dumps(spec))
        await _wstest(wstest, workdir, "fuzzingclient", "-s", "fuzzingclient.json")
        group.cancel_scope.cancel()
    return read_results(workdir, agent)


# -- fuzzingserver: our client against wstest -----------------------------------------------


async def fuzz_client(wstest: Path, workdir: Path, agent: str) -> list[Result]:
    """Run our client against wstest's fuzzingserver: each case a connection that echoes
    every text message, then the reports."""
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    spec = {
        "url": url,
        "outdir": str(workdir),
        "cases": ["*"],
        "exclude-cases": EXCLUDED_CASES,
        "exclude-agent-cases": {},
    }
    (workdir / "fuzzingserver.json").write_text(json.dumps(spec))
    command = [str(wstest), "-m", "fuzzingserver", "-s", "fuzzingserver.json", "-u", "0"]
    log = (workdir / "fuzzingserver.log").open("wb")
    async with await anyio.open_process(
        command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT
    ) as server:
        try:
            count = int(await _first_message(await _until_listening(url, server)))
            for case in range(1, count + 1):
                await _echo(f"{url}/runCase?case={case}&agent={agent}")
            await _first_message(f"{url}/updateReports?agent={agent}")
        finally:
            server.terminate()
            log.close()
    return read_results(workdir, agent)


async def _until_listening(url: str, server: anyio.abc.Process) -> str:
    """The case count's URL once wstest listens (it starts in a second or two)."""
    with anyio.fail_after(30):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", int(url.rpartition(":")[2]))
            except OSError:
                if server.returncode is not None:
                    why = f"wstest fuzzingserver exited ({server.returncode}): see its log"
                    raise RuntimeError(why) from None
                await anyio.sleep(0.1)
                continue
            await stream.aclose()
            return f"{url}/getCaseCount"


async def _first_message(url: str) -> str:
    """The first text message at ``url`` (``b""`` when the server closes without one)."""
    async with connect_websocket(
        url, max_message_bytes=MAX_MESSAGE_BYTES, keepalive_ping_interval=None
    ) as ws:
        try:
            return (await ws.receive()).decode()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return ""


async def _echo(url: str) -> None:
    """One case: every text message back, until the server closes (or the socket fails)."""
    with anyio.fail_after(60):
        async with connect_websocket(
            url, max_message_bytes=MAX_MESSAGE_BYTES, keepalive_ping_interval=None
        ) as ws:
            try:
                while True:
                    await ws.send(await ws.receive())
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass


async def _wstest(wstest: Path, workdir: Path, *args: str) -> None:
    """Run wstest in ``workdir`` to its end (its output in ``<mode>.log`` there)."""
    with (workdir / f"{args[0]}.log").open("wb") as log:
        await anyio.run_process(
            [str(wstest), "-m", *args], cwd=workdir, stdout=log, stderr=subprocess.STDOUT
        )
