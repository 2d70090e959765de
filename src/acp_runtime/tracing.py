"""Watching a connection: a record of every message, logging to stderr that never blocks,
and the hooks an instrumentation (such as :mod:`acp_runtime.otel`) implements."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:
    from ._observation import ConnectionObserver as ConnectionObserver
    from ._observation import Instrumentation as Instrumentation
    from ._observation import RequestSpan as RequestSpan
    from ._stderr_log import StderrLogHandler as StderrLogHandler
    from ._stderr_log import log_nothing as log_nothing
    from ._stderr_log import log_to_stderr as log_to_stderr
    from ._trace import TraceEvent as TraceEvent
    from ._trace import TraceSink as TraceSink
    from ._trace import TracingTransport as TracingTransport
    from ._trace import jsonl_sink as jsonl_sink
    from ._trace import logging_sink as logging_sink

_EXPORTS: dict[str, str] = {
    "ConnectionObserver": "_observation",
    "Instrumentation": "_observation",
    "RequestSpan": "_observation",
    "StderrLogHandler": "_stderr_log",
    "TraceEvent": "_trace",
    "TraceSink": "_trace",
    "TracingTransport": "_trace",
    "jsonl_sink": "_trace",
    "log_nothing": "_stderr_log",
    "log_to_stderr": "_stderr_log",
    "logging_sink": "_trace",
}
"""Each public name and the private module that defines it."""


if not TYPE_CHECKING:  # checkers see the imports above, so a misspelt name is an error
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, base="acp_runtime")

__all__ = [
    "ConnectionObserver",
    "Instrumentation",
    "RequestSpan",
    "StderrLogHandler",
    "TraceEvent",
    "TraceSink",
    "TracingTransport",
    "jsonl_sink",
    "log_nothing",
    "log_to_stderr",
    "logging_sink",
]
