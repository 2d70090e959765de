"""Both lazily loaded runtime packages still type every public name, and a misspelt one
is an error for the checkers (their ``__getattr__`` is hidden from them); so are the
generated packages, whose lazy ``__init__`` is generated the same way."""

from __future__ import annotations

from typing_extensions import reveal_type

import acp_generated.v1
import acp_runtime
import acp_runtime.remote

reveal_type(acp_runtime.ConnectionBuilder())  # expect: ConnectionBuilder
reveal_type(acp_runtime.remote.websocket_app(acp_runtime.ConnectionBuilder))  # expect: WebSocketApp
reveal_type(acp_generated.v1.PromptRequest(session_id="s", prompt=[]))  # expect: PromptRequest
misspelt = acp_runtime.Conection  # expect-error
misspelt_remote = acp_runtime.remote.websocket_ap  # expect-error
misspelt_model = acp_generated.v1.PromptRequst  # expect-error
