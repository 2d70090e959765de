"""Both lazily loaded packages still type every public name, and a misspelt one is an
error for the checkers (their ``__getattr__`` is hidden from them)."""

from __future__ import annotations

from typing_extensions import reveal_type

import acp_runtime
import acp_runtime.remote

reveal_type(acp_runtime.ConnectionBuilder())  # expect: ConnectionBuilder
reveal_type(acp_runtime.remote.websocket_app(acp_runtime.ConnectionBuilder))  # expect: WebSocketApp
misspelt = acp_runtime.Conection  # expect-error
misspelt_remote = acp_runtime.remote.websocket_ap  # expect-error
