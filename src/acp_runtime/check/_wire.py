"""Raw JSON-RPC with an agent under check: exact bytes out, every message in sorted.

The check speaks raw JSON, not through a :class:`~acp_runtime._connection.Connection`, so
it can send what a connection never would (malformed JSON, a notification nobody knows)
and see everything the agent writes, including what a connection would swallow (a reply
to a notification, a line that is not JSON). Requests from the agent are answered as a
client that declared no capabilities would: -32601, except ``session/request_permission``.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, cast

import anyio

from .._trace import TracingTransport
from .._transport import MessageTooLarge, Transport
from ..testing._validation import Finding, MessageValidator

Message = dict[str, Any]


class AgentWire:
    def __init__(self, transport: Transport, validator: MessageValidator) -> None:
        self._transport = TracingTransport(transport, validator)
        self._validator = validator
        self._ids = itertools.count(1)
        self._answers: dict[int, Message] = {}
        self._arrived: dict[int, anyio.Event] = {}
        self.updates: list[Message] = []
        """``params`` of every ``session/update``."""
        self.agent_requests: list[Message] = []
        self.stray: list[Message] = []
        """Responses to no request of ours (a reply to a notification, say)."""
        self.not_json: list[bytes] = []
        self.closed = anyio.Event()
        """Set when the agent's stdout ends."""
        self.hold_permissions = False
        self.held: list[Any] = []
        """Ids of permission requests held (not answered) while ``hold_permissions``."""
        self.permission_asked = anyio.Event()

    async def run(self) -> None:
        """Read until the agent's stdout ends."""
        try:
            while True:
                try:
                    data = await self._transport.receive()
                except MessageTooLarge:
                    continue
                await self._sort(data)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            self.closed.set()

    async def _sort(self, data: bytes) -> None:
        try:
            message: Any = json.loads(data)
        except ValueError:
            self.not_json.append(data)
            return
        if not isinstance(message, dict) or cast(Message, message).get("jsonrpc") != "2.0":
            self._validator.findings.append(
                Finding(
                    "error",
                    "?",
                    "envelope",
                    "jsonrpc",
                    f"not a JSON-RPC 2.0 message: {data[:80]!r}",
                )
            )
            return
        msg = cast(Message, message)
        if "method" in msg:
            if "id" in msg:
                await self._answer(msg)
            elif msg["method"] == "session/update":
                self.updates.append(msg.get("params") or {})
            return
        request_id = msg.get("id")
        if (
            isinstance(request_id, int)
            and request_id in self._arrived
            and request_id not in self._answers
        ):
            self._answers[request_id] = msg
            self._arrived[request_id].set()
        else:
            self.stray.append(msg)

    async def _answer(self, request: Message) -> None:
        self.agent_requests.append(request)
        if request["method"] != "session/request_permission":
            error = {"code": -32601, "message": "Method not found"}
            await self.send({"jsonrpc": "2.0", "id": request["id"], "error": error})
            return
        self.permission_asked.set()
        if self.hold_permissions:
            self.held.append(request["id"])
            return
        params: Any = request.get("params") or {}
        options: list[Any] = params.get("options") or []
        allow = [o.get("optionId") for o in options if str(o.get("kind", "")).startswith("allow")]
        outcome = (
            {"outcome": "selected", "optionId": allow[0]} if allow else {"outcome": "cancelled"}
        )
        await self.send({"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": outcome}})

    async def release_held(self) -> None:
        """Answer the held permission requests ``cancelled``, as a client does on cancel."""
        held, self.held = self.held, []
        for request_id in held:
            result = {"outcome": {"outcome": "cancelled"}}
            await self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def send(self, message: Message) -> None:
        await self.send_raw(json.dumps(message).encode())

    async def send_raw(self, data: bytes) -> None:
        try:
            await self._transport.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the agent is gone: the checks see it as no answer

    async def start(self, method: str, params: Any) -> int:
        """Send a request; :meth:`answer` waits for its response."""
        request_id = next(self._ids)
        self._arrived[request_id] = anyio.Event()
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def arrival(self, request_id: int) -> anyio.Event:
        """Set when the response to ``request_id`` has arrived."""
        return self._arrived[request_id]

    async def answer(self, request_id: int, within: float) -> Message | None:
        """The response to ``request_id``, or None if none came within ``within`` seconds."""
        with anyio.move_on_after(within):
            await self._arrived[request_id].wait()
        return self._answers.get(request_id)

    async def request(self, method: str, params: Any, within: float) -> Message | None:
        return await self.answer(await self.start(method, params), within)

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})
