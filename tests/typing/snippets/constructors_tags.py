"""Issue #15 traps 3 and 4 for the checkers: tags may be left out, typos are errors."""

from __future__ import annotations

from typing import Literal

from typing_extensions import assert_type

from acp_generated.v1 import (
    AgentMessageChunkSessionUpdate,
    PromptResponse,
    SessionNotification,
    TextContentBlock,
)
from acp_generated.v2 import TextContentBlock as TextContentBlockV2

block = TextContentBlock(text="hi")
assert_type(block.type, Literal["text"])
assert_type(TextContentBlockV2(text="hi").type, Literal["text"])
chunk = AgentMessageChunkSessionUpdate(content=block)
assert_type(chunk.session_update, Literal["agent_message_chunk"])
note = SessionNotification(session_id="s", update=chunk)
assert_type(note.session_id, str)
assert_type(block.type, Literal["image"])  # expect-error

typo = PromptResponse(stop_reasn="end_turn")  # expect-error
wrong_tag = TextContentBlock(type="image", text="x")  # expect-error
