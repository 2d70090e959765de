"""The tutorial's agent (``FileAgent``) served over WebSocket, one connection per socket.

Needs the extra: ``pip install "acp-typed-runtime[http]"`` (and hypercorn for ``--server
hypercorn``). Then::

    python examples/ws_agent.py --port 8765            # ws://127.0.0.1:8765/acp
    python examples/ws_agent.py --token s3cret         # clients send "Authorization: Bearer s3cret"
    python examples/ws_agent.py --server hypercorn     # the same app under an ASGI server

The app is :func:`acp_runtime.remote.websocket_app`. By default it serves on its own
listener (:meth:`~acp_runtime.remote.WebSocketApp.serve`, no ASGI server, the fastest);
``--server hypercorn`` mounts it in hypercorn instead, as any ASGI server can. Either runs
on asyncio or trio. Ctrl-C closes open sockets with 1001.
"""

from __future__ import annotations

import argparse
import hmac
import signal
from collections.abc import Mapping
from functools import partial
from typing import Literal

import anyio
from tutorial_agent import FileAgent

from acp_runtime.remote import WebSocketApp, websocket_app
from acp_runtime.transports import DEFAULT_MAX_MESSAGE_BYTES


def bearer_check(token: str) -> partial[bool]:
    return partial(_has_token, f"Bearer {token}")


def _has_token(expected: str, headers: Mapping[str, str]) -> bool:
    return hmac.compare_digest(headers.get("authorization", ""), expected)


async def serve(host: str, port: int, token: str | None, server: str, backend: str) -> None:
    app = websocket_app(FileAgent, authenticate=bearer_check(token) if token else None)
    if server == "own":
        await serve_on_own_listener(app, host, port)
    else:
        await serve_under_hypercorn(app, host, port, backend)


async def serve_on_own_listener(app: WebSocketApp, host: str, port: int) -> None:
    async with anyio.create_task_group() as tg:
        await tg.start(app.serve, host, port)
        print(f"serving ACP on ws://{host}:{port}/acp", flush=True)
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:  # cancelling serve closes the open sockets with 1001
                break
        tg.cancel_scope.cancel()


async def serve_under_hypercorn(app: WebSocketApp, host: str, port: int, backend: str) -> None:
    from hypercorn.config import Config

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
    parser.add_argument(
        "--server",
        choices=["own", "hypercorn"],
        default="own",
        help="its own listener (no ASGI server), or mounted in hypercorn",
    )
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    backend: Literal["asyncio", "trio"] = args.backend
    anyio.run(serve, args.host, args.port, args.token, args.server, backend, backend=backend)


if __name__ == "__main__":
    main()
