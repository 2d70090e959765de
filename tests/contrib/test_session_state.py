"""SessionAccumulator: a session's state folded from its updates, with subscribers."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import Connection, ConnectionBuilder, memory_pair
from acp_runtime.contrib import SessionAccumulator, SessionState, ToolCallTracker


def note(update: Any, session_id: str = "s1") -> v1.SessionNotification:
    return v1.SessionNotification(session_id=session_id, update=update)


def test_message_text_per_role_and_message_boundaries() -> None:
    acc = SessionAccumulator()
    acc.apply(note(b.user_message_chunk(content=b.text(text="hi "))))
    acc.apply(note(b.user_message_chunk(content=b.text(text="there"))))
    acc.apply(note(b.agent_thought_chunk(content=b.text(text="hmm"))))
    acc.apply(note(b.agent_message_chunk(content=b.text(text="Hel"))))
    acc.apply(note(b.agent_message_chunk(content=b.image(data="AA==", mime_type="image/png"))))
    state = acc.apply(note(b.agent_message_chunk(content=b.text(text="lo"))))
    assert state.text("user") == "hi there"
    assert state.text("thought") == "hmm"
    assert state.text("agent") == "Hello"
    assert [m.role for m in state.messages] == ["user", "thought", "agent"]
    assert len(state.messages[-1].content) == 3  # the image block is kept, not as text


def test_a_new_message_id_starts_a_new_message() -> None:
    acc = SessionAccumulator()
    acc.apply(note(b.agent_message_chunk(content=b.text(text="one"), message_id="m1")))
    state = acc.apply(note(b.agent_message_chunk(content=b.text(text="two"), message_id="m2")))
    assert [(m.message_id, m.text) for m in state.messages] == [("m1", "one"), ("m2", "two")]
    assert state.text() == "onetwo"


def test_tool_calls_by_id_keep_their_latest_fields() -> None:
    acc = SessionAccumulator()
    acc.apply(note(b.tool_call(tool_call_id="t1", title="Read a", kind="read", status="pending")))
    acc.apply(note(b.tool_call(tool_call_id="t2", title="Edit b", kind="edit")))
    acc.apply(note(b.tool_call_update(tool_call_id="t1", status="in_progress")))
    done = [b.tool_content(content=b.text(text="body"))]
    state = acc.apply(note(b.tool_call_update(tool_call_id="t1", status="completed", content=done)))
    t1 = state.tool_calls["t1"]
    assert (t1.title, t1.kind, t1.status) == ("Read a", "read", "completed")
    assert t1.content == tuple(done)
    assert list(state.tool_calls) == ["t1", "t2"]
    assert state.tool_calls["t2"].status is None


def test_an_update_for_an_unknown_call_starts_tracking_it() -> None:
    acc = SessionAccumulator()
    state = acc.apply(note(b.tool_call_update(tool_call_id="late", status="failed")))
    assert state.tool_calls["late"].status == "failed"
    assert state.tool_calls["late"].title is None


def test_each_plan_replaces_the_last_and_the_mode_is_followed() -> None:
    acc = SessionAccumulator()
    first = b.plan_entry(content="a", priority="high", status="pending")
    second = b.plan_entry(content="a", priority="high", status="completed")
    acc.apply(
        note(b.plan(entries=[first, b.plan_entry(content="b", priority="low", status="pending")]))
    )
    state = acc.apply(note(b.plan(entries=[second])))
    assert state.plan == (second,)
    state = acc.apply(note(b.current_mode_update(current_mode_id="code")))
    assert state.current_mode_id == "code"


def test_subscribers_see_each_change_and_states_are_snapshots() -> None:
    acc = SessionAccumulator()
    seen: list[tuple[SessionState, object]] = []
    unsubscribe = acc.subscribe(lambda state, update: seen.append((state, update)))
    first = b.agent_message_chunk(content=b.text(text="a"))
    old = acc.apply(note(first))
    acc.apply(note(b.usage_update(used=1, size=10)))  # a kind it does not fold: no change
    acc.apply(note(b.agent_message_chunk(content=b.text(text="b"))))
    assert [update for _, update in seen][:1] == [first]
    assert len(seen) == 2
    assert old.text() == "a"  # kept by a subscriber, untouched by later updates
    assert acc.state("s1").text() == "ab"
    unsubscribe()
    acc.apply(note(b.agent_message_chunk(content=b.text(text="c"))))
    assert len(seen) == 2


def test_sessions_are_kept_apart_and_can_be_forgotten() -> None:
    acc = SessionAccumulator()
    acc.apply(note(b.agent_message_chunk(content=b.text(text="x")), "a"))
    acc.apply(note(b.agent_message_chunk(content=b.text(text="y")), "b"))
    assert (acc.state("a").text(), acc.state("b").text()) == ("x", "y")
    acc.forget("a")
    assert sorted(acc.sessions) == ["b"]
    assert acc.state("a") == SessionState("a")


@pytest.mark.anyio
async def test_a_tracked_call_reaches_the_client_state_over_a_connection() -> None:
    """The agent's tracker and the client's accumulator, over a memory pair."""
    acc = SessionAccumulator()
    changed = anyio.Event()

    class Client(v1.ClientHandler):
        async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
            state = acc.apply(params)
            if any(call.status == "completed" for call in state.tool_calls.values()):
                changed.set()

    agent_builder, client_builder = ConnectionBuilder("agent"), ConnectionBuilder("client")
    Client().attach(client_builder)
    a, c = memory_pair()
    with anyio.fail_after(5):
        async with agent_builder.connect(a) as cx, client_builder.connect(c):
            tracker = ToolCallTracker(v1.RemoteClient(cx), b, session_id="s1")
            async with tracker.track(title="List", kind="search", raw_input={"q": 1}) as call:
                await call.update(content=[b.tool_content(content=b.text(text="3 files"))])
            await changed.wait()
    [seen] = acc.state("s1").tool_calls.values()
    assert seen.tool_call_id == call.tool_call_id
    assert (seen.title, seen.kind, seen.status, seen.raw_input) == (
        "List",
        "search",
        "completed",
        {"q": 1},
    )
    assert seen.content == (b.tool_content(content=b.text(text="3 files")),)
