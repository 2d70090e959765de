"""The conformance checks: one agent process, driven over stdio, each check one line.

The client declares no ``fs`` or ``terminal`` capability for the whole run, so any such
request from the agent is a defect. Each step waits at most ``timeout`` seconds; the
cancellation and exit checks use their own bounds.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from acp_generated.v1 import methods as v1_methods
from acp_generated.v2 import methods as v2_methods

from .._process import spawn_agent
from ..testing._validation import MessageValidator
from ._report import CheckResult
from ._wire import AgentWire, Message

ProtocolName = Literal["v1", "v2"]
UNKNOWN_METHOD = "acp-check/no-such-method"
UNKNOWN_NOTIFICATION = "acp-check/no-such-notification"
MALFORMED = b'{"jsonrpc": "2.0", "id": 1000, "method": "initialize", "params": {'
CLIENT_INFO = {"name": "acp-check", "version": "1"}


@dataclass
class Options:
    command: Sequence[str]
    protocol: ProtocolName = "v1"
    auth_method: str | None = None
    env: dict[str, str] = field(default_factory=dict[str, str])
    prompt: str = "Hello"
    cancel_prompt: str | None = None
    """The prompt of the cancellation checks (default: ``prompt``): one that keeps the
    agent busy long enough to be cancelled."""
    timeout: float = 10.0
    cancel_bound: float = 3.0
    eof_bound: float = 3.0


@dataclass(frozen=True)
class Dialect:
    """What differs between the protocol versions, as far as the checks go."""

    version: int
    initialize: dict[str, Any]
    capabilities_key: str
    authenticate: str
    turn_ends_in_answer: bool
    """v1: the ``session/prompt`` answer carries the stop reason; v2: the answer only says
    the message was inserted, and a ``state_update`` ``idle`` ends the turn."""


DIALECTS: dict[ProtocolName, Dialect] = {
    "v1": Dialect(
        1,
        {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": False, "writeTextFile": False},
                "terminal": False,
            },
            "clientInfo": CLIENT_INFO,
        },
        "agentCapabilities",
        "authenticate",
        turn_ends_in_answer=True,
    ),
    "v2": Dialect(
        2,
        {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": {}},
        "capabilities",
        "auth/login",
        turn_ends_in_answer=False,
    ),
}


async def run_checks(options: Options) -> list[CheckResult]:
    """Spawn the agent, run every check, and return the report's lines."""
    methods = v1_methods if options.protocol == "v1" else v2_methods
    validator = MessageValidator(methods.REQUESTS, methods.NOTIFICATIONS)
    env = {**os.environ, **options.env}
    process = spawn_agent(
        options.command, env=env, stderr="discard", exit_timeout=0.5, terminate_timeout=1
    )
    results: list[CheckResult] = []
    async with process, anyio.create_task_group() as tg:
        wire = AgentWire(process.transport, validator)
        tg.start_soon(wire.run)
        session = Session(wire, options, DIALECTS[options.protocol], results)
        await session.run_all()
        results += _schema(validator, wire)
        await process.send_eof()
        started = time.monotonic()
        with anyio.move_on_after(options.eof_bound) as waiting:
            status = await process.process.wait()
            results.append(
                CheckResult(
                    "EOF",
                    "pass",
                    f"exited (status {status})"
                    f" {time.monotonic() - started:.2f}s after stdin closed",
                )
            )
        if waiting.cancelled_caught:
            results.append(
                CheckResult(
                    "EOF", "error", f"still running {options.eof_bound}s after stdin closed"
                )
            )
        tg.cancel_scope.cancel()
    return results


class Session:
    """The checks that talk to the agent, in order; each appends its lines."""

    def __init__(
        self, wire: AgentWire, options: Options, dialect: Dialect, results: list[CheckResult]
    ) -> None:
        self.wire = wire
        self.options = options
        self.dialect = dialect
        self.results = results
        self.capabilities: dict[str, Any] = {}
        self.auth_methods: list[Any] = []
        self.session_id: str | None = None
        self.turns = 0
        self.answered_early: set[int] = set()
        """Cancel-check turns the agent had answered before the cancellation was sent."""

    def add(
        self, name: str, result: Literal["pass", "error", "warning", "info"], detail: str
    ) -> None:
        self.results.append(CheckResult(name, result, detail))

    async def run_all(self) -> None:
        if not await self.initialize():
            return
        await self.authenticate()
        if await self.new_session():
            await self.load_session()
            await self.prompt_turn()
            await self.session_cancel()
            await self.cancel_request()
        await self.unknown_method()
        await self.malformed_json()
        await self.unknown_notification()
        self.no_undeclared_calls()

    # -- initialize -----------------------------------------------------------------------

    async def initialize(self) -> bool:
        answer = await self.wire.request(
            "initialize", self.dialect.initialize, self.options.timeout
        )
        result = self._result("initialize", answer)
        if result is None:
            return False
        methods = result.get("authMethods")
        self.auth_methods = methods if isinstance(methods, list) else []  # pyright: ignore[reportUnknownVariableType]
        version = result.get("protocolVersion")
        if type(version) is not int:
            self.add(
                "initialize: version", "error", f"protocolVersion is not an integer: {version!r}"
            )
        elif version != self.dialect.version:
            self.add(
                "initialize: version",
                "error",
                f"asked for {self.dialect.version}, the agent answered {version}",
            )
        else:
            self.add("initialize: version", "pass", f"protocol version {version}")
        capabilities = result.get(self.dialect.capabilities_key)
        self.capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.add("initialize: capabilities", "info", _short(self.capabilities) or "none advertised")
        return True

    async def authenticate(self) -> None:
        offered = [m.get("id") for m in self.auth_methods if isinstance(m, dict)]  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        wanted = self.options.auth_method
        if wanted is None:
            detail = (
                f"offers {offered}; pass --auth-method to authenticate"
                if offered
                else "none required"
            )
            self.add("initialize: auth methods", "info" if offered else "pass", detail)
            return
        if wanted not in offered:
            self.add(
                "authenticate", "error", f"{wanted!r} is not among the offered methods {offered}"
            )
            return
        answer = await self.wire.request(
            self.dialect.authenticate, {"methodId": wanted}, self.options.timeout
        )
        if self._result(self.dialect.authenticate, answer) is not None:
            self.add("authenticate", "pass", f"authenticated with {wanted!r}")

    # -- sessions and turns -------------------------------------------------------------------

    async def new_session(self) -> bool:
        params: dict[str, Any] = {"cwd": os.getcwd(), "mcpServers": []}
        result = self._result(
            "session/new", await self.wire.request("session/new", params, self.options.timeout)
        )
        session_id = None if result is None else result.get("sessionId")
        if result is not None and not isinstance(session_id, str):
            self.add("session/new", "error", f"no sessionId string in the result: {_short(result)}")
        if not isinstance(session_id, str):
            self.add("session turns", "error", "skipped: no session")
            return False
        self.session_id = session_id
        self.add("session/new", "pass", f"session {session_id}")
        return True

    async def load_session(self) -> None:
        if not self.capabilities.get("loadSession"):
            self.add("session/load", "info", "not advertised (loadSession)")
            return
        before = len(self.wire.updates)
        params: dict[str, Any] = {"sessionId": self.session_id, "cwd": os.getcwd()}
        params["mcpServers"] = []
        answer = await self.wire.request("session/load", params, self.options.timeout)
        if self._result("session/load", answer) is not None:
            self.add(
                "session/load",
                "pass",
                f"loaded, {len(self.wire.updates) - before} updates replayed",
            )

    async def prompt_turn(self) -> None:
        before = len(self.wire.updates)
        request_id = await self._prompt(self.options.prompt)
        ended = await self._turn_end(request_id, before, self.options.timeout)
        if ended is None:
            return
        kinds = Counter(str(u.get("sessionUpdate")) for u in self._session_updates(before))
        summary = ", ".join(f"{kind} x{n}" for kind, n in kinds.items())
        if not kinds:
            self.add(
                "prompt turn",
                "warning",
                f"stopReason {ended}, but no session/update during the turn",
            )
        else:
            self.add("prompt turn", "pass", f"stopReason {ended}; updates: {summary}")

    async def session_cancel(self) -> None:
        name = "session/cancel"
        before = len(self.wire.updates)
        request_id, sent_at = await self._start_then(self._cancel_session)
        ended = await self._turn_end(request_id, before, self.options.cancel_bound, name=name)
        self.wire.hold_permissions = False
        if ended is None:
            await self._settle(request_id)
            return
        took = time.monotonic() - sent_at
        if ended == "cancelled":
            self.add(name, "pass", f"the turn ended cancelled {took:.2f}s after session/cancel")
        elif request_id in self.answered_early:
            self.add(
                name,
                "warning",
                f"the turn ended {ended} before session/cancel was sent;"
                " pass a --cancel-prompt that runs longer",
            )
        else:
            self.add(
                name, "error", f"the turn ended {ended!r} after session/cancel, not 'cancelled'"
            )

    async def cancel_request(self) -> None:
        name = "$/cancel_request"
        request_id, _ = await self._start_then(self._cancel_request)
        answer = await self.wire.answer(request_id, self.options.cancel_bound)
        self.wire.hold_permissions = False
        if answer is None:
            self.add(
                name,
                "info",
                f"no answer within {self.options.cancel_bound}s (cancellation is cooperative)",
            )
        elif "error" in answer:
            self.add(name, "info", f"answered error {_short(answer['error'])}")
        else:
            self.add(
                name,
                "info",
                f"answered {_short(answer.get('result'))} (cancellation is cooperative)",
            )
        await self._settle(request_id)

    # -- JSON-RPC hygiene -----------------------------------------------------------------

    async def unknown_method(self) -> None:
        answer = await self.wire.request(UNKNOWN_METHOD, {}, self.options.timeout)
        code = _error_code(answer)
        if code == -32601:
            self.add("unknown method", "pass", "-32601")
        else:
            self.add("unknown method", "error", f"expected error -32601, got {_describe(answer)}")

    async def malformed_json(self) -> None:
        strays = len(self.wire.stray)
        await self.wire.send_raw(MALFORMED)
        follow_up = await self.wire.request(UNKNOWN_METHOD, {}, self.options.timeout)
        await anyio.sleep(0.05)  # a -32700 written just after the follow-up's answer
        replies = [m for m in self.wire.stray[strays:] if _error_code(m) == -32700]
        if follow_up is None:
            self.add(
                "malformed JSON", "error", "the agent stopped answering after a malformed line"
            )
        elif not replies:  # JSON-RPC asks for one, but the agent survived: what matters most
            self.add(
                "malformed JSON", "warning", "no -32700 parse error answered (the agent went on)"
            )
        elif replies[0].get("id", "missing") is not None:
            self.add(
                "malformed JSON",
                "error",
                f"-32700 with id {replies[0].get('id', 'missing')!r}, not null",
            )
        else:
            self.add("malformed JSON", "pass", "-32700 with id null, and the agent went on")

    async def unknown_notification(self) -> None:
        strays = len(self.wire.stray)
        await self.wire.notify(UNKNOWN_NOTIFICATION, {})
        follow_up = await self.wire.request(UNKNOWN_METHOD, {}, self.options.timeout)
        replies = self.wire.stray[strays:]
        if follow_up is None:
            self.add(
                "unknown notification",
                "error",
                "the agent stopped answering after an unknown notification",
            )
        elif replies:
            self.add(
                "unknown notification",
                "error",
                f"the agent replied to a notification: {_short(replies[0])}",
            )
        else:
            self.add("unknown notification", "pass", "ignored, and the agent went on")

    def no_undeclared_calls(self) -> None:
        calls = [
            str(r.get("method"))
            for r in self.wire.agent_requests
            if str(r.get("method")).startswith(("fs/", "terminal/"))
        ]
        if calls:
            self.add(
                "undeclared capabilities",
                "error",
                f"called {sorted(set(calls))} on a client that declared no fs or terminal",
            )
        else:
            self.add(
                "undeclared capabilities",
                "pass",
                f"no fs/* or terminal/* call in {self.turns} turns (none declared)",
            )

    # -- helpers --------------------------------------------------------------------------

    async def _prompt(self, text: str) -> int:
        self.turns += 1
        params = {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]}
        return await self.wire.start("session/prompt", params)

    async def _cancel_session(self, request_id: int) -> None:
        await self.wire.notify("session/cancel", {"sessionId": self.session_id})

    async def _cancel_request(self, request_id: int) -> None:
        await self.wire.notify("$/cancel_request", {"requestId": request_id})

    async def _start_then(self, cancel: Callable[[int], Awaitable[None]]) -> tuple[int, float]:
        """Start a turn on the cancel prompt, holding permission requests; once the agent
        asks one, answers, or has had a moment, run ``cancel`` and answer what was held."""
        self.wire.hold_permissions = True
        self.wire.permission_asked = anyio.Event()
        request_id = await self._prompt(self.options.cancel_prompt or self.options.prompt)
        with anyio.move_on_after(0.3):
            async with anyio.create_task_group() as tg:

                async def first(event: anyio.Event) -> None:
                    await event.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(first, self.wire.permission_asked)
                tg.start_soon(first, self.wire.arrival(request_id))
        if self.wire.arrival(request_id).is_set():
            self.answered_early.add(request_id)
        sent_at = time.monotonic()
        await cancel(request_id)
        await self.wire.release_held()
        return request_id, sent_at

    async def _turn_end(
        self, request_id: int, before: int, bound: float, name: str = "prompt turn"
    ) -> str | None:
        """The stop reason, or None after reporting why there is none."""
        started = time.monotonic()
        answer = await self.wire.answer(request_id, bound)
        if answer is None:
            self.add(name, "error", f"session/prompt not answered within {bound}s")
            return None
        if "error" in answer:
            self.add(name, "error", f"session/prompt answered error {_short(answer['error'])}")
            return None
        result = answer.get("result")
        if self.dialect.turn_ends_in_answer:
            reason = result.get("stopReason") if isinstance(result, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            if not isinstance(reason, str):
                self.add(name, "error", f"no stopReason in the answer: {_short(result)}")
                return None
            return reason
        with anyio.move_on_after(max(bound - (time.monotonic() - started), 0)):
            while True:
                for update in self._session_updates(before):
                    if (
                        update.get("sessionUpdate") == "state_update"
                        and update.get("state") == "idle"
                    ):
                        return str(update.get("stopReason"))
                await anyio.sleep(0.02)
        self.add(name, "error", f"no state_update idle within {bound}s")
        return None

    async def _settle(self, request_id: int) -> None:
        """A turn a check left running: cancel it and give it a moment to end."""
        if not self.wire.arrival(request_id).is_set():
            await self._cancel_session(request_id)
            await self.wire.answer(request_id, self.options.cancel_bound)

    def _session_updates(self, before: int) -> list[Message]:
        """The ``update`` objects of this session's notifications since index ``before``."""
        updates = [
            n.get("update")
            for n in self.wire.updates[before:]
            if n.get("sessionId") == self.session_id
        ]
        return [u for u in updates if isinstance(u, dict)]  # pyright: ignore[reportUnknownVariableType]

    def _result(self, method: str, answer: Message | None) -> dict[str, Any] | None:
        """The answer's result object, or None after reporting why there is none."""
        if answer is None:
            self.add(method, "error", f"no answer within {self.options.timeout}s")
            return None
        if "error" in answer:
            self.add(method, "error", f"answered error {_short(answer['error'])}")
            return None
        result = answer.get("result")
        if not isinstance(result, dict):
            self.add(method, "error", f"the result is not an object: {_short(result)}")
            return None
        return result  # pyright: ignore[reportUnknownVariableType]


def _schema(validator: MessageValidator, wire: AgentWire) -> list[CheckResult]:
    # One line per distinct problem: an agent repeats the same mistake in every update.
    counts = Counter(validator.findings)
    found = [
        CheckResult(
            f"schema: {f.method} {f.part}",
            f.severity,
            f"{f.where}: {f.problem}" + (f" (x{n})" if n > 1 else ""),
        )
        for f, n in counts.items()
    ]
    if wire.not_json:
        found.append(
            CheckResult(
                "schema: stdout",
                "error",
                f"{len(wire.not_json)} lines that are not JSON, first: {wire.not_json[0][:80]!r}",
            )
        )
    return found or [CheckResult("schema", "pass", "every message valid under the strict schema")]


def _error_code(answer: Message | None) -> Any:
    error = (answer or {}).get("error")
    return error.get("code") if isinstance(error, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def _describe(answer: Message | None) -> str:
    return (
        "no answer"
        if answer is None
        else _short({k: v for k, v in answer.items() if k != "jsonrpc"})
    )


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."
