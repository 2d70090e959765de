"""Benchmark: what request observation costs, off and on.

Sequential raw round trips over an in-memory pair, both connections in this process, so
the figure is the CPU time (``time.process_time``) of both sides per round trip, with no
pipes or second process to add noise. ``--mode``:

* ``off``: no instrumentation (the default for every connection; the hot paths test one
  attribute per request);
* ``noop``: ``acp_runtime.otel`` on both sides with OpenTelemetry's no-op provider (the
  hooks and the API calls, no span objects);
* ``sdk``: the same with the SDK's provider, a ``SimpleSpanProcessor`` and the in-memory
  exporter (spans are made and exported).

Prints one JSON object. Compare modes, or commits (``PYTHONPATH=<other>/src``), within one
session, interleaved: a shared VM moves by 5-10 % between runs.

    python bench/otel_bench.py --mode off --requests 20000
    python bench/otel_bench.py --quick          # every mode, 200 requests: checks it runs
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import anyio

from acp_runtime import ConnectionBuilder, JsonValue, Responder, memory_pair

WARMUP = 500


async def echo(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
    return params


def builders(mode: str) -> tuple[ConnectionBuilder, ConnectionBuilder]:
    server, client = ConnectionBuilder().on_raw_request(echo), ConnectionBuilder()
    if mode == "off":
        return server, client
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import NoOpTracerProvider

    from acp_runtime.otel import instrument

    provider: Any = NoOpTracerProvider()
    if mode == "sdk":
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    instrument(server, tracer_provider=provider)
    instrument(client, tracer_provider=provider)
    return server, client


async def cpu_us_per_round_trip(mode: str, requests: int) -> float:
    server, client = builders(mode)
    ours, theirs = memory_pair()
    async with server.connect(ours), client.connect(theirs) as cx:
        for _ in range(WARMUP):
            await cx.send_raw_request("_bench/echo", [1])
        start = time.process_time()
        for _ in range(requests):
            await cx.send_raw_request("_bench/echo", [1])
        return (time.process_time() - start) / requests * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="What request observation costs, off and on.")
    parser.add_argument("--mode", choices=["off", "noop", "sdk"], action="append")
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--quick", action="store_true", help="every mode, 200 requests")
    args = parser.parse_args(argv)
    modes = args.mode or (["off", "noop", "sdk"] if args.quick else ["off"])
    requests = 200 if args.quick else args.requests
    record: dict[str, Any] = {
        "kind": "otel",
        "backend": args.backend,
        "requests": requests,
        "python": sys.version.split()[0],
        "cpu_us_per_round_trip": {
            mode: round(anyio.run(cpu_us_per_round_trip, mode, requests, backend=args.backend), 2)
            for mode in modes
        },
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main()
