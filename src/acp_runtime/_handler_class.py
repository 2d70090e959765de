"""Checks on the generated handler classes' subclasses, run when they are attached.

A handler method is registered by its name (``prompt``), so a misspelt one (``promt``),
or one under its name before 0.x renamed it (``session_prompt``), would be silently skipped
and the peer would get -32601. Refusing the class at ``attach`` turns that into an error at
start-up that names the method meant.
A public async method that is the class's own API, not a handler, says so with
:func:`not_a_handler`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])

_CHECKED: set[type] = set()
_NOT_A_HANDLER = "__acp_not_a_handler__"

_RENAMED = {
    "session_prompt": "prompt",
    "session_new": "new_session",
    "session_load": "load_session",
    "session_cancel": "cancel",
    "session_list": "list_sessions",
    "session_close": "close_session",
    "session_delete": "delete_session",
    "session_resume": "resume_session",
    "session_fork": "fork_session",
    "session_archive": "archive_session",
    "session_unarchive": "unarchive_session",
    "session_set_mode": "set_session_mode",
    "session_set_title": "set_session_title",
    "session_set_config_option": "set_session_config_option",
    "session_request_permission": "request_permission",
    "fs_read_text_file": "read_text_file",
    "fs_write_text_file": "write_text_file",
    "terminal_create": "create_terminal",
    "terminal_kill": "kill_terminal",
    "terminal_release": "release_terminal",
    "terminal_wait_for_exit": "wait_for_terminal_exit",
    "terminal_cancel": "cancel_terminal",
    "tool_call_cancel": "cancel_tool_call",
    "elicitation_create": "create_elicitation",
    "elicitation_complete": "complete_elicitation",
    "auth_login": "login",
    "auth_logout": "logout",
    "providers_list": "list_providers",
    "providers_set": "set_provider",
    "providers_disable": "disable_provider",
    "mcp_message_notification": "mcp_message",
    "proxy_initialize": "initialize_proxy",
}
"""Handler names before the one-name-per-method rename (docs/migration.md), only to word
the error: an old name is refused like any other, with the new name in the message."""


def not_a_handler(method: F) -> F:
    """Mark a public async method of a handler class as its own API (``wait_idle``), so
    ``attach`` does not take its name for a misspelt ACP method."""
    setattr(method, _NOT_A_HANDLER, True)
    return method


def refuse_unknown_methods(cls: type, base: type, side: str, *others: type) -> None:
    """Raise ``TypeError`` if ``cls`` has a public async method that ``base`` does not
    declare and that is not marked :func:`not_a_handler`.

    The message names the closest method of ``base``, or says the name is a method of
    another side (``others``); ``side`` ("agent" or "client") words it.
    """
    if cls in _CHECKED:
        return
    known = _public(base)
    foreign = {name for other in others for name in _public(other)} - known
    unknown: list[str] = []
    for owner in cls.__mro__[: cls.__mro__.index(base)]:
        for name, value in vars(owner).items():
            if (
                name.startswith("_")
                or name in known
                or not inspect.iscoroutinefunction(value)
                or getattr(value, _NOT_A_HANDLER, False)
            ):
                continue
            import difflib  # only to word a refusal: not on every agent's start-up

            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            if _RENAMED.get(name) in known:
                unknown.append(
                    f"{owner.__name__}.{name} (renamed: the handler is now {_RENAMED[name]!r})"
                )
            elif name in foreign:
                unknown.append(f"{owner.__name__}.{name} (a method the other side handles)")
            elif close:
                unknown.append(f"{owner.__name__}.{name} (did you mean {close[0]!r}?)")
            else:
                unknown.append(f"{owner.__name__}.{name}")
    if unknown:
        raise TypeError(
            f"{', '.join(unknown)}: no ACP method the {side} handles has this name, so it "
            "would never be called; rename it, start a helper's name with '_', or mark the "
            "class's own API with @acp_runtime.not_a_handler"
        )
    _CHECKED.add(cls)


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}
