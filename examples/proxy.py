"""An ACP proxy on stdin/stdout that spawns its agent and forwards everything to it.

    python examples/proxy.py [--trace-dir DIR] [--log] -- <agent command...>

It sits between an editor (upstream, on stdio) and an agent (downstream, a
subprocess): every message is forwarded with its own per-hop id, and a
``$/cancel_request`` from either side is re-issued on the other hop for that hop's
id, never tunnelled. It also adds a method of its own, answered without the agent:
``_example_proxy/ping`` returns ``{"pong": <params>, "proxy": <pid>}``.

``--trace-dir DIR`` writes each hop's wire trace as JSON lines to
``DIR/upstream.jsonl`` and ``DIR/downstream.jsonl``; ``--log`` logs every message
on stderr. Proxies chain: the agent command may start another proxy.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Generator
from pathlib import Path
from typing import IO, Any

import anyio

from acp_runtime import RequestMethod, Responder, Transport, spawn_agent, stdio_transport
from acp_runtime.proxies import Proxy
from acp_runtime.tracing import TraceEvent, TraceSink, TracingTransport, jsonl_sink, logging_sink

log = logging.getLogger("example_proxy")

PING: RequestMethod[dict[str, Any], dict[str, Any]] = RequestMethod(
    "_example_proxy/ping", dict[str, Any], dict[str, Any], side="agent"
)


def build_proxy() -> Proxy:
    """The forwarding proxy plus its own ``_example_proxy/ping`` method."""
    proxy = Proxy()

    async def ping(params: dict[str, Any], responder: Responder[dict[str, Any]]) -> dict[str, Any]:
        return {"pong": params, "proxy": os.getpid()}

    proxy.upstream_builder.on_request(PING, ping)
    return proxy


def traced(transport: Transport, sinks: list[TraceSink]) -> Transport:
    if not sinks:
        return transport

    def fan_out(event: TraceEvent) -> None:
        for sink in sinks:
            sink(event)

    return TracingTransport(transport, fan_out)


@contextlib.contextmanager
def trace_files(trace_dir: Path | None) -> Generator[tuple[IO[str] | None, IO[str] | None]]:
    if trace_dir is None:
        yield None, None
        return
    trace_dir.mkdir(parents=True, exist_ok=True)
    with (
        (trace_dir / "upstream.jsonl").open("a") as up,
        (trace_dir / "downstream.jsonl").open("a") as down,
    ):
        yield up, down


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """Options before ``--``; everything after it is the agent command, untouched (so a
    proxy can start another proxy with its own ``--``)."""
    if "--" not in argv:
        raise SystemExit("usage: proxy.py [--trace-dir DIR] [--log] -- <agent command...>")
    split = argv.index("--")
    parser = argparse.ArgumentParser(description="An ACP proxy that spawns its agent.")
    parser.add_argument("--trace-dir", type=Path, help="write each hop's wire trace here")
    parser.add_argument("--log", action="store_true", help="log every message on stderr")
    command = argv[split + 1 :]
    if not command:
        raise SystemExit("proxy.py: missing the agent command after --")
    return parser.parse_args(argv[:split]), command


async def serve(args: argparse.Namespace, command: list[str]) -> None:
    with trace_files(args.trace_dir) as (up_file, down_file):
        up_sinks: list[TraceSink] = [jsonl_sink(up_file)] if up_file else []
        down_sinks: list[TraceSink] = [jsonl_sink(down_file)] if down_file else []
        if args.log:
            up_sinks.append(logging_sink(logging.getLogger("example_proxy.upstream"), logging.INFO))
            down_sinks.append(
                logging_sink(logging.getLogger("example_proxy.downstream"), logging.INFO)
            )
        async with spawn_agent(command) as agent:
            await build_proxy().serve(
                traced(stdio_transport(), up_sinks), traced(agent, down_sinks)
            )
    log.info("proxy done")


def main(argv: list[str]) -> int:
    args, command = parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.log else logging.WARNING,
        stream=sys.stderr,
        format="[proxy] %(name)s %(message)s",
    )
    anyio.run(serve, args, command)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
