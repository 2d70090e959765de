"""The tutorial agent under the typed test client (``acp_client``), in one process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from acp_generated import v1
from acp_runtime import RequestError
from acp_runtime.testing.v1 import TestClient, assert_stop_reason, text_of

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from tutorial_agent import FileAgent

NOTES = {"/w/notes.txt": "one\ntwo\n"}


@pytest.fixture
def acp_agent() -> FileAgent:
    return FileAgent()


@pytest.mark.anyio
@pytest.mark.acp_client(files=NOTES)
async def test_an_allowed_read_counts_the_lines(acp_client: TestClient) -> None:
    updates, answer = await acp_client.prompt("/w/notes.txt")
    assert_stop_reason(answer, "end_turn")
    assert text_of(updates).endswith("/w/notes.txt has 2 lines. ")
    statuses = [u.status for u in updates if isinstance(u, v1.ToolCallUpdateSessionUpdate)]
    assert statuses == ["in_progress", "completed"]
    assert acp_client.files.reads == ["/w/notes.txt"]
    [asked] = acp_client.permission_requests
    assert asked.tool_call.title == "Read /w/notes.txt"


@pytest.mark.anyio
@pytest.mark.acp_client(files=NOTES, permission="deny")
async def test_a_refused_read_stops_with_refusal(acp_client: TestClient) -> None:
    updates, answer = await acp_client.prompt("/w/notes.txt")
    assert_stop_reason(answer, "refusal")
    assert acp_client.files.reads == []
    assert "lines" not in text_of(updates)


@pytest.mark.anyio
async def test_a_client_without_fs_is_never_asked_for_a_file(acp_client: TestClient) -> None:
    updates, answer = await acp_client.prompt("/w/notes.txt")
    assert_stop_reason(answer, "end_turn")
    assert text_of(updates) == "This editor does not let me read files. "
    assert acp_client.permission_requests == []


@pytest.mark.anyio
@pytest.mark.acp_client(files={})
async def test_a_missing_file_fails_the_turn_with_the_clients_error(acp_client: TestClient) -> None:
    with pytest.raises(RequestError, match="Resource not found"):
        await acp_client.prompt("/w/missing.txt")
