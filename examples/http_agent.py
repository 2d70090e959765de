"""The echo agent (``EchoAgent``) served over Streamable HTTP and WebSocket, one command.

Needs the extra: ``pip install "acp-typed-runtime[http]" hypercorn``. Then::

    python examples/http_agent.py --port 8765     # http://127.0.0.1:8765/acp (and ws://)
    python examples/http_agent.py --token s3cret  # clients send "Authorization: Bearer s3cret"

The ASGI app is :func:`acp_runtime.remote._acp_app`: ``http`` requests on ``/acp`` speak
Streamable HTTP, WebSocket upgrades on the same path speak ACP over WebSocket, one
``EchoAgent`` per connection. Hypercorn serves it here (on asyncio or trio). Ctrl-C ends
every connection (SSE streams end, sockets close with 1001) and exits 0.
"""

from __future__ import annotations

import argparse
import hmac
import signal
from collections.abc import Mapping
from functools import partial
from typing import Literal

import anyio
from echo_agent import EchoAgent
from hypercorn.config import Config

from acp_runtime.remote import Refusal, acp_app
from acp_runtime.transports import DEFAULT_MAX_MESSAGE_BYTES


def bearer_check(token: str) -> partial[bool | Refusal]:
    return partial(_has_token, f"Bearer {token}")


def _has_token(expected: str, headers: Mapping[str, str]) -> bool | Refusal:
    given = headers.get("authorization")
    if given is None:
        return Refusal(401, challenge="Bearer")
    return hmac.compare_digest(given, expected)


async def serve(host: str, port: int, token: str | None, backend: str) -> None:
    app = acp_app(EchoAgent, authenticate=bearer_check(token) if token else None)
    config = Config()
    config.bind = [f"{host}:{port}"]
    config.websocket_max_message_size = DEFAULT_MAX_MESSAGE_BYTES  # as the app's own limit
    config.accesslog = None
    print(f"serving ACP on http://{host}:{port}/acp (HTTP and WebSocket)", flush=True)

    async def stop_on_signal() -> None:
        """SIGINT/SIGTERM: end every connection, then stop serving."""
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                await app.aclose()
                return

    # hypercorn's own signature is partially unknown (its WSGI alternative), hence the ignores
    if backend == "trio":
        import hypercorn.trio

        await hypercorn.trio.serve(app, config, shutdown_trigger=stop_on_signal)  # pyright: ignore[reportUnknownMemberType]
    else:
        import hypercorn.asyncio

        await hypercorn.asyncio.serve(app, config, shutdown_trigger=stop_on_signal)  # pyright: ignore[reportUnknownMemberType]


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the echo agent over HTTP and WebSocket.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", help="require this bearer token on every request")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    backend: Literal["asyncio", "trio"] = args.backend
    anyio.run(serve, args.host, args.port, args.token, backend, backend=backend)


if __name__ == "__main__":
    main()
