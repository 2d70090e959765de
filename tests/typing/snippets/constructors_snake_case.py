"""Snake_case keyword constructors type-check without the pydantic plugin."""

from __future__ import annotations

from acp_generated.v1 import (
    AgentMessageChunkSessionUpdate,
    CancelNotification,
    CancelRequestNotification,
    InitializeRequest,
    PromptRequest,
    SessionNotification,
    TextContentBlock,
    ToolCallUpdateSessionUpdate,
)
from acp_generated.v2 import PromptRequest as PromptRequestV2
from acp_generated.v2 import TextContentBlock as TextContentBlockV2

prompt = PromptRequest(session_id="s", prompt=[TextContentBlock(type="text", text="hi")])
prompt_v2 = PromptRequestV2(session_id="s", prompt=[TextContentBlockV2(type="text", text="hi")])
update = SessionNotification(
    session_id="s",
    update=AgentMessageChunkSessionUpdate(
        session_update="agent_message_chunk", content=TextContentBlock(type="text", text="x")
    ),
)
patch = ToolCallUpdateSessionUpdate(
    session_update="tool_call_update", tool_call_id="t1", title=None
)
init = InitializeRequest(protocol_version=1)
cancel = CancelNotification(session_id="s", meta={"k": "v"})
cancel_request = CancelRequestNotification(request_id=5)
session_id: str = prompt.session_id
