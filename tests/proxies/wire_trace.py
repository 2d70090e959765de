"""Read a hop's wire trace and check that its cancels only name that hop's own ids."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_runtime._trace import trace_record
from acp_runtime.tracing import TraceEvent

CANCEL = "$/cancel_request"


@dataclass(frozen=True)
class Hop:
    """The messages one endpoint of a connection saw, as ``(direction, message)``."""

    messages: list[tuple[str, dict[str, Any]]]

    @classmethod
    def from_events(cls, events: list[TraceEvent]) -> Hop:
        return cls([(r["dir"], r["msg"]) for r in map(trace_record, events) if "msg" in r])

    @classmethod
    def from_jsonl(cls, path: Path) -> Hop:
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return cls([(r["dir"], r["msg"]) for r in records if "msg" in r])

    def requests(self, direction: str, method: str | None = None) -> list[dict[str, Any]]:
        return [
            m
            for d, m in self.messages
            if d == direction and "id" in m and "method" in m and method in (None, m["method"])
        ]

    def cancels(self, direction: str) -> list[Any]:
        return [
            m["params"]["requestId"]
            for d, m in self.messages
            if d == direction and m.get("method") == CANCEL
        ]

    def responses(self, direction: str, request_id: Any) -> list[dict[str, Any]]:
        return [
            m
            for d, m in self.messages
            if d == direction and "method" not in m and m.get("id") == request_id
        ]

    def foreign_cancels(self) -> list[tuple[str, Any]]:
        """Cancels naming an id that was never a request in the same direction on this hop."""
        foreign: list[tuple[str, Any]] = []
        for direction in ("in", "out"):
            ids = [json.dumps(m["id"]) for m in self.requests(direction)]
            foreign += [(direction, c) for c in self.cancels(direction) if json.dumps(c) not in ids]
        return foreign
