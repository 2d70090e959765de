"""Route full JSON-RPC messages (transcript lines) to the generated bindings.

A line is ``{"dir": "c2a" | "a2c", "msg": {...}}``. Requests and notifications are
routed by method name and by the presence of ``id``; a response is routed to the
method of the request it answers (same id, opposite direction).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

CORPUS = Path(__file__).parent
_OPPOSITE = {"c2a": "a2c", "a2c": "c2a"}


@dataclass(frozen=True)
class Routed:
    """One payload to round-trip: which codec, and the JSON it must reproduce."""

    where: str
    kind: str  # params | result | error | extension
    method: str
    codec: Any  # a RequestMethod/NotificationMethod codec, or a TypeAdapter-like with load/dump
    payload: Any


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def route(lines: list[dict[str, Any]], methods: ModuleType, where: str) -> Iterator[Routed]:
    requests = {b.name: b for b in methods.REQUESTS}
    notifications = {b.name: b for b in methods.NOTIFICATIONS}
    pending: dict[tuple[str, Any], str] = {}
    for n, line in enumerate(lines, start=1):
        direction, msg = line["dir"], line["msg"]
        at = f"{where}:{n}"
        method = msg.get("method")
        if method is not None and "id" in msg:
            pending[(direction, json.dumps(msg["id"]))] = method
            if method in requests:
                yield Routed(at, "params", method, requests[method].params, msg.get("params"))
            else:
                yield Routed(at, "extension", method, None, msg.get("params"))
        elif method is not None:
            if method in notifications:
                yield Routed(at, "params", method, notifications[method].params, msg.get("params"))
            else:
                yield Routed(at, "extension", method, None, msg.get("params"))
        else:
            asked = pending.pop((_OPPOSITE[direction], json.dumps(msg["id"])), None)
            if asked is None:
                raise AssertionError(f"{at}: response to an unknown request id {msg['id']!r}")
            if "error" in msg:
                yield Routed(at, "error", asked, None, msg["error"])
            elif asked in requests:
                yield Routed(at, "result", asked, requests[asked].result, msg["result"])
            else:
                yield Routed(at, "extension", asked, None, msg["result"])
