"""Negative control: builders and remote facades refuse wrong keywords, types and positionals."""

from __future__ import annotations

from acp_generated.v1 import RemoteAgent, RemoteClient
from acp_generated.v1.builders import agent_message_chunk, plan_entry, text, tool_call
from acp_runtime import Connection

typo = text(txt="hi")  # expect-error
positional = text("hi")  # expect-error
wrong_type = text(text=3)  # expect-error
tag_by_hand = text(type="text", text="hi")  # expect-error
bad_literal = plan_entry(content="x", priority="urgent", status="pending")  # expect-error
not_a_block = agent_message_chunk(content="hi")  # expect-error
missing = tool_call(tool_call_id="t")  # expect-error


def calls(cx: Connection) -> None:
    RemoteAgent(cx).prompt(session_id="s", promt=[])  # expect-error
    RemoteAgent(cx).prompt(session_id="s", prompt=["hi"])  # expect-error
    RemoteClient(cx).read_text_file(session_id="s", path=1)  # expect-error
    RemoteClient(cx).prompt(session_id="s", prompt=[])  # expect-error
