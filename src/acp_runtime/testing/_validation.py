"""Check every message an agent sends against one protocol version's strict models.

The runtime parses what a peer sends leniently (``acp_runtime._lenient``): a value the
schema's ``x-deserialize-*`` rules cover is salvaged and the connection goes on. A test
or a conformance check wants to know about it all the same, so :class:`MessageValidator`
watches the wire (it is a :data:`~acp_runtime._trace.TraceSink`) and turns each message
into findings: an *error* for what strict validation refuses and no rule salvages, a
*warning* naming each salvaged field. Each finding names the method and the field path.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel, TypeAdapter, ValidationError

from .._lenient import format_path, salvaged
from .._methods import NotificationMethod, RequestMethod, _Codec  # pyright: ignore[reportPrivateUsage]
from .._trace import TraceEvent

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One problem in one message: ``session/update params: update.content.text: ...``."""

    severity: Severity
    method: str
    part: str
    """``params`` of a request or notification, ``result`` of a response."""
    where: str
    """The JSON path of the field (``$`` for the whole value)."""
    problem: str

    def __str__(self) -> str:
        return f"{self.method} {self.part}: {self.where}: {self.problem}"


class MessageValidator:
    """Validates what the agent sends: requests and notifications by their method, responses
    by the method of the request they answer (seen going out)."""

    def __init__(
        self,
        requests: Iterable[RequestMethod[Any, Any]],
        notifications: Iterable[NotificationMethod[Any]],
    ) -> None:
        self._requests = {method.name: method for method in requests}
        self._notifications = {method.name: method for method in notifications}
        self._sent: dict[Any, RequestMethod[Any, Any]] = {}
        self.findings: list[Finding] = []

    def __call__(self, event: TraceEvent) -> None:
        if event.error is not None:
            return
        try:
            message = json.loads(event.message)
        except ValueError:
            return  # the runtime itself reports what does not parse
        if not isinstance(message, dict):
            return
        if event.direction == "out":
            self._remember_request(message)  # pyright: ignore[reportUnknownArgumentType]
        else:
            self.check(message)  # pyright: ignore[reportUnknownArgumentType]

    def _remember_request(self, message: dict[str, Any]) -> None:
        method = self._requests.get(message.get("method", ""))
        if method is not None and "id" in message:
            self._sent[message["id"]] = method

    def check(self, message: dict[str, Any]) -> list[Finding]:
        """Validate one message from the agent; returns (and keeps) its findings."""
        name = message.get("method")
        found: list[Finding] = []
        if isinstance(name, str):
            params = message.get("params")
            request = self._requests.get(name)
            notification = self._notifications.get(name)
            codec = request.params if request else notification.params if notification else None
            if codec is not None:
                found = validate(codec, params, name, "params")
        elif "result" in message:
            sent = self._sent.pop(message.get("id"), None)
            if sent is not None:
                found = validate(sent.result, message["result"], sent.name, "result")
        self.findings += found
        return found

    def errors(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == "error"]

    def warnings(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == "warning"]


def validate(codec: _Codec[Any], value: Any, method: str, part: str) -> list[Finding]:
    """Strict validation of ``value``; salvages as warnings, the rest as errors."""
    try:
        _strict(codec.type, value)
        return []
    except ValidationError as strict_error:
        error = strict_error
    try:
        parsed = codec.load(value)  # what a connection would make of it
    except ValidationError:
        pass
    else:
        return [
            Finding("warning", method, part, s.where, f"salvaged ({s.error_type}): {s.action}")
            for s in salvaged(parsed)
        ] or [Finding("warning", method, part, "$", "salvaged")]
    return [
        Finding("error", method, part, format_path(json_path(e["loc"], value)), e["msg"])
        for e in error.errors(include_url=False, include_input=False)
    ]


def json_path(loc: tuple[str | int, ...], value: Any) -> tuple[str | int, ...]:
    """The path of pydantic's error location in the JSON value itself: the steps that are
    no key of it (a union's tag, ``agent_message_chunk``) are left out, so the path reads
    ``update.content.text``; a missing field, the last step, is kept."""
    path: list[str | int] = []
    current: Any = value
    for index, step in enumerate(loc):
        child = _child(current, step)
        if child is not _ABSENT:
            current = child
        elif index != len(loc) - 1:
            continue
        path.append(step)
    return tuple(path)


_ABSENT = object()


def _child(value: Any, step: str | int) -> Any:
    """``value[step]`` as JSON has it (a key of an object, an index of an array), or
    ``_ABSENT``."""
    if isinstance(value, dict) and isinstance(step, str):
        return cast("dict[str, Any]", value).get(step, _ABSENT)
    if isinstance(value, list) and isinstance(step, int):
        items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return items[step] if 0 <= step < len(items) else _ABSENT
    return _ABSENT


def _strict(tp: Any, value: Any) -> None:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        tp.model_validate(value)
    else:
        TypeAdapter[Any](cast(Any, tp)).validate_python(value)
