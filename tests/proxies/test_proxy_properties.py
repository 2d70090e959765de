"""Property test of a proxy hop under random interleavings of client cancels, agent answers
and barriers (PROXY-1, OUT-3, OUT-4, OUT-7 at the hop, GAP-1/GAP-24).

Whatever the order, the client gets exactly one response per request, equal to what the
agent answered; the agent sees at most one cancel per request, only for requests the
client cancelled, only with its own ids, and none once the proxy had routed its answer
before the client's cancel arrived.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_runtime.proxies import Proxy

from .helpers import CANCEL, CANCELLED, around, cancel, error, request, result

Action = tuple[str, int]

actions = st.integers(min_value=1, max_value=4).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(
            st.one_of(
                st.tuples(
                    st.sampled_from(["cancel", "answer-data", "answer-cancelled"]),
                    st.integers(0, n - 1),
                ),
                st.tuples(st.sampled_from(["agent-barrier", "client-barrier"]), st.just(0)),
            ),
            max_size=12,
        ),
    )
)


async def scenario(n: int, steps: list[Action]) -> None:
    async with around(Proxy()) as (client, agent):
        for i in range(n):
            await client.send(request(f"c-{i}", "work", {"i": i}))
        down_ids: dict[int, Any] = {}
        for _ in range(n):
            message = await agent.receive()
            down_ids[message["params"]["i"]] = message["id"]

        answers: dict[int, dict[str, Any]] = {}
        cancelled: set[int] = set()
        settled_before_cancel: set[int] = set()  # answer routed at the proxy, then a cancel
        routed: set[int] = set()
        for kind, i in steps:
            if kind == "cancel":
                if i in routed and i not in cancelled:
                    settled_before_cancel.add(i)
                cancelled.add(i)
                await client.send(cancel(f"c-{i}"))
            elif kind.startswith("answer") and i not in answers:
                answers[i] = (
                    result(down_ids[i], {"i": i})
                    if kind == "answer-data"
                    else error(down_ids[i], *CANCELLED)
                )
                await agent.send(answers[i])
            elif kind == "agent-barrier":
                await agent.barrier()
                routed |= set(answers)
            elif kind == "client-barrier":
                await client.barrier()
        for i in range(n):
            if i not in answers:
                answers[i] = result(down_ids[i], {"i": i})
                await agent.send(answers[i])

        with anyio.fail_after(5):
            while len([m for m in client.log if "method" not in m]) < n:
                await client.receive()
        await client.receive_nothing_until_barrier()
        await agent.barrier()

    responses = {m["id"]: m for m in client.log if "method" not in m}
    assert len(responses) == n
    for i, answer in answers.items():
        expected = dict(answer, id=f"c-{i}")
        assert responses[f"c-{i}"] == expected

    agent_cancels = [m["params"]["requestId"] for m in agent.log if m.get("method") == CANCEL]
    assert len(agent_cancels) == len(set(map(repr, agent_cancels)))  # at most one per request
    by_down_id = {repr(d): i for i, d in down_ids.items()}
    cancelled_at_agent = {by_down_id[repr(c)] for c in agent_cancels}  # KeyError: a foreign id
    assert cancelled_at_agent <= cancelled
    assert not (cancelled_at_agent & settled_before_cancel)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_proxy_hop_settles_each_request_once_with_the_agents_answer(
    backend: str, case: tuple[int, list[Action]]
) -> None:
    n, steps = case
    anyio.run(scenario, n, steps, backend=backend)
