"""One ACP agent for v1 and v2 clients on stdin/stdout, behind a version router.

The v1 handlers are ``examples/echo_agent.py``'s, the v2 handlers ``examples/v2_agent.py``'s;
:class:`acp_runtime.VersionRouter` reads the client's ``initialize`` and hands the
connection to the builder of the version it asks for: the highest configured version at
or below ``protocolVersion`` (a v1-only router always picks v1). Everything before
``initialize`` is answered by the router (requests get -32600), an unsupported version
gets -32022. Any ACP client drives it: ``examples/client.py`` (v1) or
``examples/v2_client.py`` (v2). ``tests/interop/peers/router_agent.mjs`` is its
TypeScript twin.

Usage: ``python examples/router_agent.py [--quiet] [--versions 1,2] [--chunk-delay SECONDS]``
"""

from __future__ import annotations

import argparse
import logging
import sys

import anyio
from echo_agent import EchoAgent
from v2_agent import V2Agent

from acp_runtime import ConnectionBuilder, stdio_transport
from acp_runtime.proxies import VersionRouter

log = logging.getLogger("router_agent")


def make_router(versions: set[int], chunk_delay: float) -> tuple[VersionRouter, EchoAgent]:
    """A router over the echo agents of ``versions``; the v1 agent, to wait for its turns."""
    echo = EchoAgent()
    v1 = v2 = None
    if 1 in versions:
        v1 = ConnectionBuilder(role="agent")
        echo.attach(v1)
    if 2 in versions:
        v2 = ConnectionBuilder(role="agent")
        V2Agent(chunk_delay).attach(v2)
    return VersionRouter(v1=v1, v2=v2), echo


async def serve(versions: set[int], chunk_delay: float) -> None:
    router, echo = make_router(versions, chunk_delay)
    routed = await router.accept(stdio_transport())  # answers what comes before initialize
    if routed is None:
        log.info("stdin closed before initialize")
        return
    log.info("serving protocol v%d", routed.protocol_version)
    async with routed.connect() as cx:
        await cx.wait_incoming_closed()
        await echo.wait_idle()  # answer the v1 prompts still in flight before closing
    log.info("stdin closed; exiting")


def parse_versions(text: str) -> set[int]:
    versions = {int(v) for v in text.split(",")}
    if not versions or not versions <= {1, 2}:
        raise argparse.ArgumentTypeError("versions are 1, 2 or 1,2")
    return versions


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="ACP v1 + v2 echo agent on stdin/stdout")
    parser.add_argument("--quiet", action="store_true", help="no log on stderr")
    parser.add_argument("--versions", type=parse_versions, default={1, 2}, metavar="1,2")
    parser.add_argument("--chunk-delay", type=float, default=0.05, metavar="SECONDS")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        stream=sys.stderr,
        format="[router-agent] %(message)s",
    )
    anyio.run(serve, args.versions, args.chunk_delay)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
