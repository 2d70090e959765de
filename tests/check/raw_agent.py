"""A small ACP v1 agent in plain Python (json and threads, no SDK), correct by default,
with one deliberate defect chosen by ``--defect``: the conformance check must report
each defect as the error of its check, and nothing on the correct agent.

Prompts: ``sleep <ms>`` waits (``session/cancel`` ends it ``cancelled``); anything else
is echoed in one chunk.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

DEFECTS = {
    "version-string": 'answers initialize with protocolVersion "1", a string',
    "no-session": "answers session/new with an error",
    "no-method-not-found": "answers an unknown method with a result",
    "crash-on-malformed": "exits on a line that is not JSON",
    "replies-to-notification": "answers an unknown notification with an error",
    "ignores-cancel": "ignores session/cancel: a sleeping turn runs to its end",
    "calls-fs": "reads a file from a client that declared no fs capability",
    "no-exit-on-eof": "keeps running when stdin closes",
    "invalid-update": "sends a session/update whose text block has no text",
}

lock = threading.Lock()
cancels: dict[str, threading.Event] = {}


def send(message: dict[str, Any]) -> None:
    with lock:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()


def chunk(session_id: str, text: str, defect: str | None) -> None:
    content: dict[str, Any] = {"type": "text", "text": text}
    if defect == "invalid-update":
        del content["text"]
    update = {"sessionUpdate": "agent_message_chunk", "content": content}
    send({"method": "session/update", "params": {"sessionId": session_id, "update": update}})


def prompt(request_id: Any, params: dict[str, Any], defect: str | None) -> None:
    session_id = params["sessionId"]
    text = "".join(b.get("text", "") for b in params["prompt"] if b.get("type") == "text")
    if defect == "calls-fs":
        read = {"sessionId": session_id, "path": "/etc/hostname"}
        send({"id": "fs-1", "method": "fs/read_text_file", "params": read})
    stop = "end_turn"
    if text.startswith("sleep "):
        cancelled = cancels.setdefault(session_id, threading.Event())
        cancelled.clear()
        seconds = int(text.split()[1]) / 1000
        if defect == "ignores-cancel":
            time.sleep(seconds)
        elif cancelled.wait(seconds):
            stop = "cancelled"
    else:
        chunk(session_id, text, defect)
    send({"id": request_id, "result": {"stopReason": stop}})


def handle(message: dict[str, Any], defect: str | None) -> None:
    method, request_id, params = message.get("method"), message.get("id"), message.get("params")
    if method is None:
        return  # a response (to fs/read_text_file)
    if "id" not in message:
        if method == "session/cancel":
            cancels.setdefault(params["sessionId"], threading.Event()).set()
        elif defect == "replies-to-notification" and not method.startswith("$/"):
            send({"id": None, "error": {"code": -32601, "message": "Method not found"}})
        return
    if method == "initialize":
        version: Any = "1" if defect == "version-string" else 1
        result = {"protocolVersion": version, "agentCapabilities": {}, "authMethods": []}
        send({"id": request_id, "result": result})
    elif method == "session/new":
        if defect == "no-session":
            send({"id": request_id, "error": {"code": -32603, "message": "Internal error"}})
        else:
            send({"id": request_id, "result": {"sessionId": "session-1"}})
    elif method == "session/prompt":
        threading.Thread(target=prompt, args=(request_id, params, defect), daemon=True).start()
    elif defect == "no-method-not-found":
        send({"id": request_id, "result": {}})
    else:
        send({"id": request_id, "error": {"code": -32601, "message": "Method not found"}})


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--defect", choices=sorted(DEFECTS))
    defect = parser.parse_args().defect
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            if defect == "crash-on-malformed":
                return 1
            send({"id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        handle(message, defect)
    if defect == "no-exit-on-eof":
        time.sleep(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
