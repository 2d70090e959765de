"""A misbehaving agent for the peer-fault tests: ``python raw_agent.py <mode>``.

Plain blocking I/O, no SDK: it first asks the client for ``client/work`` (so the client
has spawned handler work running), then misbehaves per mode:

  kill-me      announce each request with a ``turn/started`` notification, never answer
               (the test kills the process mid-turn)
  half-line    at the first request write half a response, close stdout, keep reading
  close-stdin  at the first request close stdin, say ``stdin/closed``, then wait forever
  no-read      say ``ready`` and never read stdin again (the client's writes back up);
               on SIGUSR1 say ``late``

Hostile answers (no ``client/work`` first), one mode per case of issue #16:

  too-large          answer the first request with a line over the client's limit whose
                     first bytes name its id, the later ones with ``"ok"``
  too-large-no-id    answer the first request with an over-limit line whose id comes last
  malformed          answer the first request with both ``result`` and ``error``, the
                     later ones with ``"ok"``
  bom                write a UTF-8 byte-order mark, then answer every request ``"ok"``
  flood <n>          send n ``_echo/ping`` requests with 1 KB params without reading; on
                     SIGUSR1 read the answers, then say ``flood/done`` with their count
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


OVER_LIMIT = 128 * 1024
"""Bigger than the limit the tests give the client for these modes."""


def answer(request_id: object, body: str) -> None:
    sys.stdout.write(f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},{body}}}\n')
    sys.stdout.flush()


def hostile_answers(mode: str) -> None:
    if mode == "bom":
        sys.stdout.write("\ufeff")
    for n, request in enumerate(requests()):
        if n or mode == "bom":
            answer(request["id"], '"result":"ok"')
        elif mode == "too-large":
            answer(request["id"], f'"result":{{"pad":"{"x" * OVER_LIMIT}"}}')
        elif mode == "too-large-no-id":
            say({"result": {"pad": "x" * OVER_LIMIT}, "id": request["id"]})
        elif mode == "malformed":
            answer(request["id"], '"result":"ok","error":{"code":1,"message":"both"}')


def flood(count: int) -> None:
    """Write requests from a thread; read only once SIGUSR1 says so."""
    go = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: go.set())
    pad = "p" * 1000

    def write() -> None:
        for n in range(count):
            say({"id": n, "method": "_echo/ping", "params": {"pad": pad}})

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    go.wait()
    answers = 0
    for line in sys.stdin:
        answers += '"pong"' in line
        if answers == count:
            break
    writer.join()
    say({"method": "flood/done", "params": {"answers": answers}})
    sys.stdin.read()


def main() -> None:
    mode = sys.argv[1]
    if mode == "flood":
        flood(int(sys.argv[2]))
        return
    if mode in ("too-large", "too-large-no-id", "malformed", "bom"):
        hostile_answers(mode)
        return
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
