"""The check's report: one line per check, as a table or as JSON, and the exit status."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Literal

Result = Literal["pass", "error", "warning", "info"]


@dataclass(frozen=True)
class CheckResult:
    name: str
    result: Result
    detail: str = ""


def table(results: list[CheckResult]) -> str:
    """Aligned text: name, result, detail; then the counts."""
    width = max((len(r.name) for r in results), default=0)
    lines = [f"{r.name:<{width}}  {r.result:<7}  {r.detail}".rstrip() for r in results]
    counts = {kind: sum(r.result == kind for r in results) for kind in _KINDS}
    lines.append(", ".join(f"{n} {kind}" for kind, n in counts.items()))
    return "\n".join(lines)


def as_json(results: list[CheckResult]) -> str:
    return json.dumps([asdict(r) for r in results], indent=2)


def exit_status(results: list[CheckResult]) -> int:
    """1 when some check is an error; warnings and information do not fail."""
    return 1 if any(r.result == "error" for r in results) else 0


_KINDS: tuple[Result, ...] = ("pass", "error", "warning", "info")
