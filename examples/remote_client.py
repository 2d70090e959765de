"""A terminal ACP v1 client of a remote agent: connect to its URL, prompt, print what it
streams.

Needs the extra: ``pip install "acp-typed-runtime[http]"``. Then::

    python examples/remote_client.py http://127.0.0.1:8765/acp            # Streamable HTTP
    python examples/remote_client.py ws://127.0.0.1:8765/acp --token s3cret   # WebSocket
    python examples/remote_client.py URL --prompt hello --prompt permission --backend trio

The scheme picks the transport (:func:`acp_runtime.remote.connect_to_remote_agent`); the
rest is the local client's (examples/client.py): it initializes, opens a session, sends
each ``--prompt``, answers permission requests and serves ``fs/read_text_file`` from disk.
``--token`` goes as ``Authorization: Bearer <token>`` on every request.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
from client import TerminalClient, prompt_text

from acp_generated.v1 import (
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    RemoteAgent,
)
from acp_runtime.remote import connect_to_remote_agent

DEFAULT_PROMPTS = ["Hello from the Python ACP SDK!", "permission"]


async def run(args: argparse.Namespace) -> int:
    terminal = TerminalClient()
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else None
    async with connect_to_remote_agent(args.url, terminal, headers=headers) as cx:
        agent = RemoteAgent(cx)
        init = await agent.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True)),
            client_info=Implementation(name="acp-typed-remote-client", version="0.1.0"),
        )
        agent_name = f"{init.agent_info.name} {init.agent_info.version}" if init.agent_info else "?"
        print(f"-> initialize: {agent_name}, protocol {init.protocol_version}")
        session = await agent.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        print(f"-> session/new: {session.session_id}")
        for text in args.prompt or DEFAULT_PROMPTS:
            print(f"-> prompt {text!r}")
            response = await prompt_text(agent, session.session_id, text)
            terminal.end_turn(f"stopReason {response.stop_reason}")
    return 0


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Talk to a remote ACP agent at a URL.")
    parser.add_argument("url", help="http(s)://host:port/acp or ws(s)://host:port/acp")
    parser.add_argument("--prompt", action="append", help="prompt text (repeatable)")
    parser.add_argument("--token", help="send 'Authorization: Bearer TOKEN'")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    return anyio.run(run, args, backend=args.backend)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
