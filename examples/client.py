"""A terminal ACP v1 client: spawn an agent, prompt it, print what it streams.

    python examples/client.py -- python examples/echo_agent.py
    python examples/client.py --prompt "hello" --no-cancel-demo -- some-other-agent --stdio

It initializes, opens a session, sends each ``--prompt`` in turn (the defaults exercise
the echo agent's commands), answers permission requests with the first "allow" option,
serves ``fs/read_text_file`` from disk, and then shows both ways to stop work:

* ``session/cancel``: the turn ends normally with ``stopReason: cancelled``;
* request cancellation alone (``$/cancel_request``, with ``cx.send_cancel_request``): the
  echo agent answers the request with error -32800. (``SentRequest.cancel()`` and
  ``cancel_after`` send ``session/cancel`` as well, which is what real agents act on.)

It is written the one documented way: ``connect_to_agent`` with a ``ClientHandler``, and
the typed facade ``RemoteAgent`` for the requests.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from acp_generated.v1 import (
    AgentMessageChunkSessionUpdate,
    AgentThoughtChunkSessionUpdate,
    ClientCapabilities,
    ClientHandler,
    FileSystemCapabilities,
    Implementation,
    PlanSessionUpdate,
    PromptResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RemoteAgent,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedRequestPermissionOutcome,
    SessionNotification,
    TextContentBlock,
    ToolCallSessionUpdate,
    ToolCallUpdateSessionUpdate,
)
from acp_runtime import Connection, RequestError, Responder, SentRequest, connect_to_agent

DEFAULT_PROMPTS = ["Hello from the Python ACP SDK!", "mixed", "permission", "chunks 3"]


class TerminalClient(ClientHandler):
    """Prints session updates as they stream and answers the agent's requests."""

    def __init__(self) -> None:
        self._mid_line = False  # a message chunk was printed without a newline yet

    def _line(self, text: str) -> None:
        if self._mid_line:
            print()
            self._mid_line = False
        print(text)

    async def session_update(self, params: SessionNotification, cx: Connection) -> None:
        update = params.update
        if isinstance(update, AgentMessageChunkSessionUpdate):
            if isinstance(update.content, TextContentBlock):
                if not self._mid_line:
                    print("   agent: ", end="")
                print(update.content.text.replace("\n", " "), end="", flush=True)
                self._mid_line = True
        elif isinstance(update, AgentThoughtChunkSessionUpdate):
            if isinstance(update.content, TextContentBlock):
                self._line(f"   (thinking) {update.content.text}")
        elif isinstance(update, ToolCallSessionUpdate):
            self._line(f"   [tool] {update.title}: {update.status or 'pending'}")
        elif isinstance(update, ToolCallUpdateSessionUpdate):
            self._line(f"   [tool] {update.tool_call_id}: {update.status or 'updated'}")
        elif isinstance(update, PlanSessionUpdate):
            for entry in update.entries:
                self._line(f"   [plan] [{entry.status}] {entry.content}")
        else:
            self._line(f"   ({update.session_update})")

    async def request_permission(
        self, params: RequestPermissionRequest, responder: Responder[RequestPermissionResponse]
    ) -> RequestPermissionResponse:
        choice = next(
            (o for o in params.options if o.kind in ("allow_once", "allow_always")),
            params.options[0],
        )
        self._line(f"   [permission] {params.tool_call.title!r}: answering {choice.name!r}")
        return RequestPermissionResponse(
            outcome=SelectedRequestPermissionOutcome(outcome="selected", option_id=choice.option_id)
        )

    async def read_text_file(
        self, params: ReadTextFileRequest, responder: Responder[ReadTextFileResponse]
    ) -> ReadTextFileResponse:
        self._line(f"   [fs] agent reads {params.path}")
        try:
            return ReadTextFileResponse(content=await anyio.Path(params.path).read_text())
        except OSError as error:
            raise RequestError.resource_not_found(params.path) from error

    def end_turn(self, outcome: str) -> None:
        self._line(f"   <- {outcome}")


def prompt_text(agent: RemoteAgent, session_id: str, text: str) -> SentRequest[PromptResponse]:
    return agent.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text=text)])


async def run(args: argparse.Namespace) -> int:
    terminal = TerminalClient()
    quiet = not args.agent_stderr
    async with connect_to_agent(
        args.agent, terminal, stderr="discard" if quiet else "inherit"
    ) as cx:
        agent = RemoteAgent(cx)
        init = await agent.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True)),
            client_info=Implementation(name="acp-typed-example-client", version="0.1.0"),
        )
        agent_name = f"{init.agent_info.name} {init.agent_info.version}" if init.agent_info else "?"
        print(f"-> initialize: {agent_name}, protocol {init.protocol_version}")
        session = await agent.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        session_id = session.session_id
        print(f"-> session/new: {session_id}")

        for text in args.prompt or DEFAULT_PROMPTS:
            print(f"-> prompt {text!r}")
            response = await prompt_text(agent, session_id, text)
            terminal.end_turn(f"stopReason {response.stop_reason}")

        if args.cancel_demo:
            await show_session_cancel(agent, session_id, args, terminal)
            await show_request_cancellation(cx, agent, session_id, args, terminal)
    return 0


async def show_session_cancel(
    agent: RemoteAgent, session_id: str, args: argparse.Namespace, terminal: TerminalClient
) -> None:
    """The user presses "stop": the turn ends normally, as `cancelled`."""
    print(f"-> prompt {args.long_prompt!r}, then session/cancel after {args.cancel_after}s")
    turn = prompt_text(agent, session_id, args.long_prompt)
    await anyio.sleep(args.cancel_after)
    await agent.cancel(session_id=session_id)
    response = await turn
    terminal.end_turn(f"stopReason {response.stop_reason}")


async def show_request_cancellation(
    cx: Connection,
    agent: RemoteAgent,
    session_id: str,
    args: argparse.Namespace,
    terminal: TerminalClient,
) -> None:
    """Cancel one request with `$/cancel_request` alone: the echo agent answers -32800."""
    print(f"-> prompt {args.long_prompt!r}, then $/cancel_request after {args.cancel_after}s")
    turn = prompt_text(agent, session_id, args.long_prompt)
    await anyio.sleep(args.cancel_after)
    cx.send_cancel_request(turn.id)
    try:
        response = await turn
    except RequestError as error:
        terminal.end_turn(f"error {error.code} {error.message}")
    else:  # the agent finished before it saw the cancellation
        terminal.end_turn(f"stopReason {response.stop_reason}")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Spawn an ACP agent and talk to it.",
        usage="%(prog)s [options] -- AGENT_COMMAND [ARGS...]",
    )
    parser.add_argument(
        "--prompt", action="append", help="prompt text (repeatable; default: an echo-agent tour)"
    )
    parser.add_argument(
        "--long-prompt", default="sleep 5000", help="prompt the cancellation demo interrupts"
    )
    parser.add_argument("--cancel-after", type=float, default=0.3, metavar="SECONDS")
    parser.add_argument(
        "--no-cancel-demo", dest="cancel_demo", action="store_false", help="skip cancellation"
    )
    parser.add_argument("--agent-stderr", action="store_true", help="show the agent's stderr")
    argv = list(argv)
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        parser.error("give the agent command after --")
    split = argv.index("--")
    args = parser.parse_args(argv[:split])
    args.agent = argv[split + 1 :]
    return args


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    return anyio.run(run, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
