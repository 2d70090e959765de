"""What a scripted client serves an agent under test: files from a dict, terminals from a
table of commands, and answers to permission requests by a rule.

They know no protocol version: the version's test client (``acp_runtime.testing.v1``)
turns requests into calls here and the results into its models.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, TypeVar

from .._errors import RequestError

R = TypeVar("R")

PermissionRule: TypeAlias = Literal["allow", "deny"] | Callable[[R], str | None]
"""``"allow"`` picks the first ``allow_*`` option, ``"deny"`` the first ``reject_*`` one
(the answer is ``cancelled`` when there is none); a callable gets the typed request and
returns the option id to select, or None to answer ``cancelled``."""


def choose_option(
    rule: PermissionRule[R], request: R, options: Iterable[tuple[str, str]]
) -> str | None:
    """The option id the rule selects among ``(option_id, kind)`` pairs, or None (cancelled)."""
    if callable(rule):
        return rule(request)
    wanted = "allow" if rule == "allow" else "reject"
    return next((option_id for option_id, kind in options if kind.startswith(wanted)), None)


@dataclass
class FakeFiles:
    """Text files by path. Reads honour ``line`` (1-based) and ``limit``; every write is
    recorded in :attr:`writes` and changes :attr:`files`."""

    files: dict[str, str] = field(default_factory=dict[str, str])
    writes: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    reads: list[str] = field(default_factory=list[str])

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        self.reads.append(path)
        if path not in self.files:
            raise RequestError(-32002, f"Resource not found: {path}", {"uri": path})
        lines = self.files[path].splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = None if limit is None else start + limit
        return "".join(lines[start:end])

    def write(self, path: str, content: str) -> None:
        self.writes.append((path, content))
        self.files[path] = content


@dataclass(frozen=True)
class FakeCommand:
    """What a command run in a fake terminal prints, and how it exits."""

    output: str = ""
    exit_code: int = 0


NOT_FOUND = FakeCommand(output="command not found\n", exit_code=127)


@dataclass
class FakeTerminal:
    command_line: str
    result: FakeCommand
    killed: bool = False
    released: bool = False


class FakeTerminals:
    """Terminals that "run" a command at once: the output and exit code configured for the
    command line (``"make test"``), else for the command alone (``"make"``), else exit
    127. :attr:`run` lists every command line, in order."""

    def __init__(self, commands: Mapping[str, FakeCommand | str] | None = None) -> None:
        self._commands = {
            line: FakeCommand(output=result) if isinstance(result, str) else result
            for line, result in (commands or {}).items()
        }
        self._ids = itertools.count(1)
        self.terminals: dict[str, FakeTerminal] = {}
        self.run: list[str] = []

    def create(self, command: str, args: Iterable[str] = ()) -> str:
        line = " ".join([command, *args])
        self.run.append(line)
        result = self._commands.get(line) or self._commands.get(command) or NOT_FOUND
        terminal_id = f"term-{next(self._ids)}"
        self.terminals[terminal_id] = FakeTerminal(line, result)
        return terminal_id

    def get(self, terminal_id: str) -> FakeTerminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None or terminal.released:
            raise RequestError.invalid_params({"terminalId": terminal_id, "reason": "unknown"})
        return terminal
