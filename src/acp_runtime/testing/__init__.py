"""Test helpers.

- :mod:`acp_runtime.testing.v1` / :mod:`~acp_runtime.testing.v2`: a typed, scripted
  client that drives an agent under test in one process (``agent_client``).
- :mod:`acp_runtime.testing.pytest_plugin`: the ``acp_client`` fixture over it.
- :mod:`acp_runtime.testing._wire`: :class:`WirePeer`, the raw-JSON end of a memory pair,
  re-exported here with its message builders.
"""

from __future__ import annotations

from ._client import AgentProtocolError as AgentProtocolError
from ._fakes import FakeCommand as FakeCommand
from ._fakes import FakeFiles as FakeFiles
from ._fakes import FakeTerminals as FakeTerminals
from ._validation import Finding as Finding
from ._validation import MessageValidator as MessageValidator
from ._wire import WirePeer as WirePeer
from ._wire import cancel as cancel
from ._wire import error as error
from ._wire import notification as notification
from ._wire import request as request
from ._wire import result as result
from ._wire import wire_connection as wire_connection
