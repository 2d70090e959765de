"""A misbehaving agent for the peer-fault tests: ``python raw_agent.py <mode>``.

Plain blocking I/O, no SDK: it first asks the client for ``client/work`` (so the client
has spawned handler work running), then misbehaves per mode:

  kill-me      announce each request with a ``turn/started`` notification, never answer
               (the test kills the process mid-turn)
  half-line    at the first request write half a response, close stdout, keep reading
  close-stdin  at the first request close stdin, say ``stdin/closed``, then wait forever
  no-read      say ``ready`` and never read stdin again (the client's writes back up);
               on SIGUSR1 say ``late``
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any


def say(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def requests() -> Iterator[dict[str, Any]]:
    for line in sys.stdin:
        message = json.loads(line)
        if "method" in message and "id" in message:
            yield message


def main() -> None:
    mode = sys.argv[1]
    say({"id": "work", "method": "client/work"})
    if mode == "no-read":
        signal.signal(signal.SIGUSR1, lambda *_: say({"method": "late"}))
        say({"method": "ready"})
        while True:
            signal.pause()
    for request in requests():
        if mode == "kill-me":
            say({"method": "turn/started", "params": {"id": request["id"]}})
        elif mode == "half-line":
            sys.stdout.write(f'{{"jsonrpc":"2.0","id":{json.dumps(request["id"])},"res')
            sys.stdout.flush()
            os.close(1)
            sys.stdin.read()  # keep running until the client closes our stdin
            os._exit(0)  # no flush of the closed stdout at exit
        elif mode == "close-stdin":
            os.close(0)
            say({"method": "stdin/closed"})
            threading.Event().wait()


if __name__ == "__main__":
    main()
