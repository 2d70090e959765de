"""An ACP v2 client showing the v2 prompt lifecycle (v2 is experimental).

    python examples/v2_client.py -- python examples/v2_agent.py

The answer to ``session/prompt`` means "your message was inserted" and carries its
``messageId``; the turn's output streams as ``session/update``, and the turn is over
when a ``state_update`` reports ``idle`` (with a ``stopReason``). To stop a running turn
the client sends ``session/cancel`` and waits for ``idle`` with ``cancelled``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from acp_generated.v2 import (
    AgentMessageChunkSessionUpdate,
    CancelledIdleStateUpdateSessionUpdate,
    ClientHandler,
    EndTurnIdleStateUpdateSessionUpdate,
    Implementation,
    PromptResponse,
    RemoteAgent,
    RunningStateUpdateSessionUpdate,
    TextContentBlock,
    UpdateSessionNotification,
    UserMessageSessionUpdate,
)
from acp_runtime import Connection, SentRequest, connect_to_agent


class TurnWatcher(ClientHandler):
    """Prints updates and tells when the session goes idle (the end of a v2 turn)."""

    def __init__(self) -> None:
        self.idle = anyio.Event()
        self.stop_reason = ""
        self._mid_line = False

    def line(self, text: str) -> None:
        """Print a full line, ending a streamed message first if one is open."""
        if self._mid_line:
            print()
            self._mid_line = False
        print(text)

    def expect_turn(self) -> None:
        """Arm for the next turn's idle update."""
        self.idle = anyio.Event()

    async def session_update(self, params: UpdateSessionNotification, cx: Connection) -> None:
        update = params.update
        if isinstance(update, UserMessageSessionUpdate):
            self.line(f"   [user_message {update.message_id}] inserted")
        elif isinstance(update, RunningStateUpdateSessionUpdate):
            self.line("   [state] running")
        elif isinstance(update, AgentMessageChunkSessionUpdate):
            if isinstance(update.content, TextContentBlock):
                if not self._mid_line:
                    print("   agent: ", end="")
                print(update.content.text, end="", flush=True)
                self._mid_line = True
        elif isinstance(
            update, (EndTurnIdleStateUpdateSessionUpdate, CancelledIdleStateUpdateSessionUpdate)
        ):
            self.line(f"   [state] idle, stopReason {update.stop_reason}")
            self.stop_reason = update.stop_reason
            self.idle.set()


def prompt_text(agent: RemoteAgent, session_id: str, text: str) -> SentRequest[PromptResponse]:
    return agent.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text=text)])


async def run(args: argparse.Namespace) -> int:
    watcher = TurnWatcher()
    quiet = not args.agent_stderr
    async with connect_to_agent(
        args.agent, watcher, stderr="discard" if quiet else "inherit"
    ) as cx:
        agent = RemoteAgent(cx)
        init = await agent.initialize(
            protocol_version=2, info=Implementation(name="acp-typed-v2-client", version="0.1.0")
        )
        print(
            f"-> initialize: {init.info.name} {init.info.version}, protocol {init.protocol_version}"
        )
        session = await agent.new_session(cwd=str(Path.cwd()))
        sid = session.session_id
        print(f"-> session/new: {sid}")

        print(f"-> prompt {args.prompt!r}")
        watcher.expect_turn()
        accepted = await prompt_text(agent, sid, args.prompt)
        # Updates may already be streaming: the dispatch loop does not wait for us.
        watcher.line(f"   <- accepted as {accepted.message_id} (the turn goes on)")
        await watcher.idle.wait()

        watcher.line(
            f"-> prompt {args.long_prompt!r}, then session/cancel after {args.cancel_after}s"
        )
        watcher.expect_turn()
        accepted = await prompt_text(agent, sid, args.long_prompt)
        watcher.line(f"   <- accepted as {accepted.message_id}")
        await anyio.sleep(args.cancel_after)
        await agent.cancel(session_id=sid)
        await watcher.idle.wait()
    return 0 if watcher.stop_reason == "cancelled" else 1


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Talk to an ACP v2 agent.",
        usage="%(prog)s [options] -- AGENT_COMMAND [ARGS...]",
    )
    parser.add_argument("--prompt", default="Version two streams, then goes idle")
    parser.add_argument("--long-prompt", default="sleep 5000")
    parser.add_argument("--cancel-after", type=float, default=0.3, metavar="SECONDS")
    parser.add_argument("--agent-stderr", action="store_true", help="show the agent's stderr")
    argv = list(argv)
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        parser.error("give the agent command after --")
    split = argv.index("--")
    args = parser.parse_args(argv[:split])
    args.agent = argv[split + 1 :]
    return args


def main(argv: Sequence[str]) -> int:
    return anyio.run(run, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
