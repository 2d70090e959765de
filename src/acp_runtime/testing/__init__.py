"""Test helpers.

- :mod:`acp_runtime.testing.v1` / :mod:`~acp_runtime.testing.v2`: a typed, scripted
  client that drives an agent under test in one process (``agent_client``).
- :mod:`acp_runtime.testing.pytest_plugin`: the ``acp_client`` fixture over it.
- :mod:`acp_runtime.testing.wire`: :class:`WirePeer`, the raw-JSON end of a memory pair,
  re-exported here with its message builders.
"""

from __future__ import annotations

from .client import AgentProtocolError as AgentProtocolError
from .fakes import FakeCommand as FakeCommand
from .fakes import FakeFiles as FakeFiles
from .fakes import FakeTerminals as FakeTerminals
from .validation import Finding as Finding
from .validation import MessageValidator as MessageValidator
from .wire import WirePeer as WirePeer
from .wire import cancel as cancel
from .wire import error as error
from .wire import notification as notification
from .wire import request as request
from .wire import result as result
from .wire import wire_connection as wire_connection
