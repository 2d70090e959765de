"""The tutorial's agent (``FileAgent``) served over WebSocket, one connection per socket.

Needs the extra: ``pip install "acp-runtime[http]" hypercorn``. Then::

    python examples/ws_agent.py --port 8765            # ws://127.0.0.1:8765/acp
    python examples/ws_agent.py --token s3cret         # clients send "Authorization: Bearer s3cret"

The ASGI app is :func:`acp_runtime.remote.websocket_app`; hypercorn serves it here (on
asyncio or trio), any ASGI server can. Ctrl-C closes open sockets with 1001.
"""

from __future__ import annotations

import argparse
import hmac
import signal
from collections.abc import Mapping
from functools import partial
from typing import Literal

import anyio
from hypercorn.config import Config
from tutorial_agent import FileAgent

from acp_runtime.framing import DEFAULT_MAX_MESSAGE_BYTES
from acp_runtime.remote import websocket_app


def bearer_check(token: str) -> partial[bool]:
    return partial(_has_token, f"Bearer {token}")


def _has_token(expected: str, headers: Mapping[str, str]) -> bool:
    return hmac.compare_digest(headers.get("authorization", ""), expected)


async def serve(host: str, port: int, token: str | None, backend: str) -> None:
    app = websocket_app(FileAgent, authenticate=bearer_check(token) if token else None)
    config = Config()
    config.bind = [f"{host}:{port}"]
    config.websocket_max_message_size = DEFAULT_MAX_MESSAGE_BYTES  # as the app's own limit
    print(f"serving ACP on ws://{host}:{port}/acp", flush=True)

    async def stop_on_signal() -> None:
        """SIGINT/SIGTERM: close the open sockets with 1001, then stop serving."""
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
    parser = argparse.ArgumentParser(description="Serve the tutorial agent over WebSocket.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", help="require this bearer token on the upgrade")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    backend: Literal["asyncio", "trio"] = args.backend
    anyio.run(serve, args.host, args.port, args.token, backend, backend=backend)


if __name__ == "__main__":
    main()
