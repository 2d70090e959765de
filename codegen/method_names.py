"""The one Python name of each protocol method, on both sides.

A handler class's method for ``session/prompt`` and the remote facade's call to it are both
``prompt``: the names users know from the peers (the PyPI ``agent-client-protocol`` package's
``Agent`` / ``Client`` and the classic TypeScript SDK interfaces). Every template takes the
name from here (through :attr:`codegen.method_table.Method.py_name`).

A method this table does not know (a future schema's) gets its wire name in snake_case
(``document/didOpen`` -> ``document_did_open``), and :func:`check_names` refuses a table
that gives two methods of one side the same name, or a method the name of a handler-class
or facade attribute.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping
from typing import Protocol

METHOD_NAMES: Mapping[str, str] = {
    # -- what the agent handles (the client calls) --
    "initialize": "initialize",
    "authenticate": "authenticate",
    "logout": "logout",
    "auth/login": "login",
    "auth/logout": "logout",
    "auth/status": "auth_status",
    "providers/list": "list_providers",
    "providers/set": "set_provider",
    "providers/disable": "disable_provider",
    "session/new": "new_session",
    "session/load": "load_session",
    "session/list": "list_sessions",
    "session/delete": "delete_session",
    "session/fork": "fork_session",
    "session/archive": "archive_session",
    "session/unarchive": "unarchive_session",
    "session/status": "session_status",
    "session/set_title": "set_session_title",
    "session/resume": "resume_session",
    "session/close": "close_session",
    "session/set_mode": "set_session_mode",
    "session/set_config_option": "set_session_config_option",
    "session/prompt": "prompt",
    "session/cancel": "cancel",
    "tool_call/cancel": "cancel_tool_call",
    "terminal/cancel": "cancel_terminal",
    # -- what the client handles (the agent calls) --
    "session/request_permission": "request_permission",
    "session/update": "session_update",
    "fs/read_text_file": "read_text_file",
    "fs/write_text_file": "write_text_file",
    "terminal/create": "create_terminal",
    "terminal/output": "terminal_output",
    "terminal/release": "release_terminal",
    "terminal/wait_for_exit": "wait_for_terminal_exit",
    "terminal/kill": "kill_terminal",
    "elicitation/create": "create_elicitation",
    "elicitation/complete": "complete_elicitation",
    "auth/status_update": "auth_status_update",
    # -- both directions (a request one way, a notification the other) --
    "mcp/message": "mcp_message",
    # -- what a proxy handles (its conductor calls) --
    "proxy/initialize": "initialize_proxy",
    "proxy/successor": "proxy_successor",
    # -- the runtime's, on every side --
    "$/cancel_request": "cancel_request",
}
"""Wire name -> Python name. A wire name that is a request and a notification of one side
(``proxy/successor``) names the notification with a ``_notification`` suffix."""

RESERVED: frozenset[str] = frozenset(
    {"attach", "ext_method", "ext_notification", "connection", "peer"}
)
"""Attributes of a handler class (``attach``, ``ext_method``, ``ext_notification``) or a
facade (``connection``, ``peer``): no method may take their names. ``cancel_request`` is
``$/cancel_request``'s own, so :func:`check_names` refuses it as a duplicate."""

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class MethodNameError(ValueError):
    """Two methods of one side share a Python name, or one takes a reserved name."""


class Named(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def py_name(self) -> str: ...


def snake_wire_name(method: str) -> str:
    """``document/didOpen`` -> ``document_did_open``; ``$/cancel_request`` -> ``cancel_request``."""
    bare = method.removeprefix("$/")
    return _CAMEL_BOUNDARY.sub("_", bare).replace("/", "_").lower()


def python_name(method: str, names: Mapping[str, str] = METHOD_NAMES) -> str:
    """The Python name of wire method ``method`` (the table's, else its snake_case)."""
    return names.get(method) or snake_wire_name(method)


def check_names(side: str, methods: Iterable[Named]) -> None:
    """Refuse the methods one side handles if their Python names collide or are reserved."""
    seen: dict[str, str] = {}
    problems: list[str] = []
    for m in methods:
        name = m.py_name
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            problems.append(f"{m.name} -> {name!r} is not a public Python identifier")
        elif name in RESERVED:
            problems.append(f"{m.name} -> {name!r} is a handler-class or facade attribute")
        elif name in seen:
            problems.append(f"{seen[name]} and {m.name} both map to {name!r}")
        seen.setdefault(name, m.name)
    if problems:
        raise MethodNameError(
            f"method names of the {side} side collide: {'; '.join(problems)} "
            "(fix codegen/method_names.py METHOD_NAMES)"
        )
