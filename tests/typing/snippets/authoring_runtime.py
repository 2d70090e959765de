"""Issue #15's runtime helpers for the checkers: PromptTurns, the runners, DeadlockError."""

from __future__ import annotations

from typing_extensions import assert_type

from acp_generated import v1
from acp_runtime import Connection, DeadlockError, Responder, connect_to_agent, run_agent
from acp_runtime.contrib import PromptTurns, Turn

turns = PromptTurns(cancelled=v1.PromptResponse(stop_reason="cancelled"))
assert_type(turns, PromptTurns[v1.PromptResponse])


async def work(turn: Turn, params: v1.PromptRequest) -> v1.PromptResponse:
    assert_type(turn.session_cancelled, bool)
    return v1.PromptResponse(stop_reason="end_turn")


async def handle(params: v1.PromptRequest, responder: Responder[v1.PromptResponse]) -> None:
    started = turns.start(params.session_id, responder, work, params)
    assert_type(started, Turn)
    turns.start(params.session_id, responder, work, "not a request")  # expect-error


async def client() -> None:
    async with connect_to_agent(["agent"]) as cx:
        assert_type(cx, Connection)


status: int = run_agent(v1.AgentHandler())
error: RuntimeError = DeadlockError("x")
run_agent(object())  # expect-error
