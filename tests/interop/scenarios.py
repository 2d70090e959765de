"""Scripted sessions for ``peers/client.mjs``, shared by the transcript capture and the tests.

Each scenario is the JSON the client takes with ``--scenario``. They only use the
echo agents' command language, so the same scenario runs against the TypeScript
peer agent and ``examples/echo_agent.py`` and must give the same events.
"""

from __future__ import annotations

from typing import Any

Scenario = dict[str, Any]

WORKSPACE = "/workspace"
"""Session cwd in every scenario; fixed so captured transcripts do not depend on the machine."""

NOTES_PATH = f"{WORKSPACE}/notes.txt"
NOTES_TEXT = "first line\nsecond line with unicode: \u00e9\u00e8 \u2603\n"


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


SCENARIOS: dict[str, Scenario] = {
    "v1_prompt_streaming": {
        "steps": [
            {"op": "prompt", "text": "hello from the client"},
            {"op": "prompt", "text": "chunks 4"},
            {"op": "prompt", "text": "chunks 2 size 16"},
            {
                "op": "prompt",
                "blocks": [{"type": "text", "text": " two "}, {"type": "text", "text": "blocks "}],
            },
            {"op": "request", "method": "_echo/ping", "params": {"n": 1, "tags": ["a", "b"]}},
        ]
    },
    "v1_mixed_updates": {"steps": [{"op": "prompt", "text": "mixed"}]},
    "v1_permission": {
        "permission": "allow",
        "steps": [{"op": "prompt", "text": "permission"}],
    },
    "v1_permission_reject": {
        "permission": "reject",
        "steps": [{"op": "prompt", "text": "permission"}],
    },
    "v1_fs_read": {
        "files": {NOTES_PATH: NOTES_TEXT},
        "steps": [
            {"op": "prompt", "text": f"read {NOTES_PATH}"},
            {"op": "prompt", "text": f"read {WORKSPACE}/missing.txt"},
        ],
    },
    "v1_session_cancel": {
        "steps": [
            {"op": "prompt", "text": "sleep 10000", "as": "sleep", "wait": False},
            {"op": "cancel"},
            {"op": "await", "target": "sleep"},
            {"op": "prompt", "text": "after cancel"},
        ]
    },
    "v1_permission_cancelled_by_agent": {
        "permission": "hold",
        "steps": [
            {"op": "prompt", "text": "permission", "as": "turn", "wait": False},
            {"op": "wait_event", "event": "permission_request"},
            {"op": "cancel"},
            {"op": "await", "target": "turn"},
        ],
    },
    "v1_permission_cancelled_answered_with_error": {
        "permission": "hold",
        "onPermissionCancel": "error",
        "steps": [
            {"op": "prompt", "text": "permission", "as": "turn", "wait": False},
            {"op": "wait_event", "event": "permission_request"},
            {"op": "cancel"},
            {"op": "await", "target": "turn"},
        ],
    },
    "v1_cancel_request": {
        "steps": [
            {"op": "prompt", "text": "sleep 10000", "as": "sleep", "wait": False},
            {"op": "abort", "target": "sleep"},
            {"op": "await", "target": "sleep"},
            {"op": "prompt", "text": "sleep 1"},
        ]
    },
    "v1_prompt_error": {
        "steps": [
            {"op": "prompt", "text": "error -32042 custom failure"},
            {"op": "prompt", "text": "error 1"},
        ]
    },
}


V2_SCENARIO = "v2_prompt_lifecycle"
"""The v2 transcript: peers/v2_client.mjs sends V2_PROMPT (runs to idle), then
V2_LONG_PROMPT, which it stops with session/cancel once the turn is running."""
V2_PROMPT = "hello v2 from ts"
V2_LONG_PROMPT = "sleep 20000"


def scenario_with_cwd(name: str) -> Scenario:
    """The named scenario with the fixed workspace cwd filled in."""
    return {"cwd": WORKSPACE, **SCENARIOS[name]}
