"""Salvaging a failed validation: repair what the schema's lenient markers allow, retry.

Every salvage is logged here (logger ``acp_runtime._salvage``, rate-limited like other
records a peer causes): the message method, the JSON path and the pydantic error type,
never the value, which may be anything a peer sent.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from ._lenient import SALVAGED_KEY, Salvage
from ._log_throttle import peer_log
from ._salvage_walk import repair

log = logging.getLogger(__name__)

T = TypeVar("T")


def validate_salvaging(
    validate: Callable[[Any], T],
    core_schema: Any,
    data: Any,
    error: ValidationError,
    *,
    method: str | None = None,
) -> T:
    """``validate(data)`` failed with ``error``: repair what the markers allow and retry.

    Raises ``error`` itself when some error is not caught by a marked point, so what the
    caller sees for an input no rule covers is exactly the strict error.
    """
    if isinstance(data, (str, bytes, bytearray)):
        try:
            data = json.loads(data)
        except ValueError:
            raise error from None
    records: list[Salvage] = []
    current = error
    for _ in range(_ROUNDS):
        fixed = repair(core_schema, data, current.errors(include_url=False, include_input=False))
        if fixed is None:
            raise error
        data, found = fixed
        records += found
        try:
            value = validate(data)
        except ValidationError as again:
            current = again
            continue
        _report(records, method)
        if hasattr(value, "__dict__"):
            value.__dict__[SALVAGED_KEY] = tuple(records)
        return value
    raise error


_ROUNDS = 4
"""Repair rounds before giving up: a repair can only expose another one through a union
choosing a different variant, so more than two is already unusual."""


def _report(records: list[Salvage], method: str | None) -> None:
    for record in records:
        peer_log.log(
            log,
            logging.WARNING,
            "%s: salvaged %s (%s): %s",
            method or "<no method>",
            record.where,
            record.error_type,
            record.action,
            extra={
                "acp_method": method,
                "acp_request_id": None,
                "acp_path": record.where,
                "acp_error_type": record.error_type,
            },
        )
