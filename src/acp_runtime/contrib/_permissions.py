"""Asking the client for permission: ``session/request_permission``, answered as a decision.

The client answers with the option the user chose, or ``cancelled`` when the prompt turn
was cancelled meanwhile (the protocol's rule: a client that gets ``session/cancel`` answers
its pending permission requests so). :class:`PermissionBroker` turns both into one
:class:`PermissionDecision`, and remembers an ``allow_always`` / ``reject_always`` answer
for a key, so the same question is not asked twice::

    broker = PermissionBroker(v1.RemoteClient(cx))
    decision = await broker.ask(session_id=sid, tool_call=call.as_update(), options=options)
    if decision.allowed: ...

Ask from spawned work, not from a handler's body: the answer arrives through the dispatch
loop the handler holds.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from ._shapes import PermissionAsker


class PermissionOptionLike(Protocol):
    """A ``PermissionOption`` of any version."""

    @property
    def option_id(self) -> str: ...

    @property
    def kind(self) -> str: ...


OptionT = TypeVar("OptionT", bound=PermissionOptionLike)


@dataclass(frozen=True)
class PermissionDecision(Generic[OptionT]):
    """The client's answer: the option chosen, or ``None`` if the turn was cancelled."""

    option: OptionT | None

    @property
    def cancelled(self) -> bool:
        """The prompt turn was cancelled before the user chose."""
        return self.option is None

    @property
    def allowed(self) -> bool:
        """The user chose an ``allow_once`` or ``allow_always`` option."""
        return self.option is not None and self.option.kind.startswith("allow")

    @property
    def always(self) -> bool:
        """The choice is meant to stand for later questions (``*_always``)."""
        return self.option is not None and self.option.kind.endswith("_always")


class PermissionBroker:
    """Asks the client through its facade (``acp_generated.vN.RemoteClient``)."""

    def __init__(self, client: PermissionAsker) -> None:
        self.client = client
        self._standing: dict[Hashable, str] = {}

    async def ask(
        self,
        *,
        session_id: str,
        tool_call: Any,
        options: Sequence[OptionT],
        remember: Hashable | None = None,
    ) -> PermissionDecision[OptionT]:
        """Ask, and return the decision.

        With ``remember``, an ``*_always`` answer stands for that key: a later ``ask`` with
        the same key and an option of the same kind returns it without asking. An option id
        the client made up is refused with ``ValueError``.
        """
        if remember is not None and remember in self._standing:
            kind = self._standing[remember]
            for option in options:
                if option.kind == kind:
                    return PermissionDecision(option)
        response = await self.client.request_permission(
            session_id=session_id, tool_call=tool_call, options=options
        )
        outcome = response.outcome
        if getattr(outcome, "outcome", None) != "selected":
            return PermissionDecision(None)
        chosen = getattr(outcome, "option_id", None)
        for option in options:
            if option.option_id == chosen:
                decision = PermissionDecision(option)
                if remember is not None and decision.always:
                    self._standing[remember] = option.kind
                return decision
        raise ValueError(f"the client chose {chosen!r}, which is not one of the options")

    def forget(self, remember: Hashable) -> None:
        """Drop a standing answer: the next ``ask`` with that key asks again."""
        self._standing.pop(remember, None)
