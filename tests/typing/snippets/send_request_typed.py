"""`await cx.send_request(PromptRequest(...))` is typed PromptResponse without casts."""

from __future__ import annotations

from typing_extensions import reveal_type

from acp_generated.v1 import (
    SESSION_SET_CONFIG_OPTION,
    NewSessionRequest,
    PromptRequest,
    PromptResponse,
    TextContentBlock,
)
from acp_generated.v1.models import BooleanSetSessionConfigOptionRequest
from acp_runtime import Connection


async def use(cx: Connection) -> PromptResponse:
    response = await cx.send_request(
        PromptRequest(session_id="s", prompt=[TextContentBlock(type="text", text="hi")])
    )
    reveal_type(response)  # expect: PromptResponse
    session = await cx.send_request(NewSessionRequest(cwd="/tmp", mcp_servers=[]))
    reveal_type(session)  # expect: NewSessionResponse
    changed = await cx.send_request(
        SESSION_SET_CONFIG_OPTION,
        BooleanSetSessionConfigOptionRequest(
            session_id="s", config_id="c", type="boolean", value=True
        ),
    )
    reveal_type(changed)  # expect: SetSessionConfigOptionResponse
    return response
