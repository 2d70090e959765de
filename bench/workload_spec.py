"""Workload sizes, shared by every driver (passed to each as one JSON argument).

``FULL`` is the issue's acceptance workload; ``QUICK`` the CI smoke run (a few seconds).
"""

from __future__ import annotations

from typing import TypedDict


class Spec(TypedDict):
    warmup: int  # pings and prompts before timing (builds validators, JITs the TS side)
    ping: int  # 1: sequential `_echo/ping` round trips
    prompt: int  # 2: sequential `session/prompt` answered at once
    inflight_total: int  # 3: requests in total ...
    inflight_concurrency: int  # ... with this many in flight at once
    notify: int  # 4: `agent_message_chunk` notifications agent -> client
    notify_bytes: int  # text size of each of those chunks
    cancel: int  # 5: cancels timed, after as many untimed ones
    mixed_chunks: int  # 7: one prompt streaming this many chunks ...
    mixed_chunk_bytes: int  # ... of this size ...
    mixed_pings: int  # ... while this many sequential pings run


FULL: Spec = {
    "warmup": 300,
    "ping": 5000,
    "prompt": 3000,
    "inflight_total": 50_000,
    "inflight_concurrency": 100,
    "notify": 50_000,
    "notify_bytes": 32,
    "cancel": 1000,
    "mixed_chunks": 10_000,
    "mixed_chunk_bytes": 200,
    "mixed_pings": 100,
}

QUICK: Spec = {
    "warmup": 20,
    "ping": 100,
    "prompt": 50,
    "inflight_total": 500,
    "inflight_concurrency": 20,
    "notify": 500,
    "notify_bytes": 32,
    "cancel": 20,
    "mixed_chunks": 200,
    "mixed_chunk_bytes": 200,
    "mixed_pings": 10,
}
