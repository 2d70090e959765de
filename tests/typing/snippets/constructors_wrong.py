"""Negative control: camelCase keywords and wrong types are rejected by the checkers."""

from __future__ import annotations

from acp_generated.v1 import PromptRequest, TextContentBlock

bad_name = PromptRequest(sessionId="s", prompt=[])  # expect-error
bad_type = TextContentBlock(type="text", text=3)  # expect-error
bad_tag = TextContentBlock(type="image", text="x")  # expect-error
