"""Child processes for the transport tests: ``python fake_agent.py <mode> [args]``.

Modes that do not use the runtime import nothing heavy, so they start fast.

Modes:
  echo <backend> <limit>  echo each stdin line back through ``stdio_transport``; a
                          skipped over-limit line is answered ``{"too_large":<prefix length>}``;
                          exit 0 at stdin EOF.
  echo-stray <backend>    like echo, but first print() to stdout and run a child process
                          that inherits stdio and tries to read stdin and write stdout:
                          the isolated stdio transport must send all of that to stderr.
  stderr                  write three stderr lines (one blank), then exit at stdin EOF.
  env                     print ``{"cwd":..., "value": $ACP_TEST_VALUE}``, exit at stdin EOF.
  ignore-eof              print ``{"ready":true}``, then never exit by itself.
  ignore-term             ignore SIGTERM, print ``{"ready":true}``, then never exit by itself.
  grandchild              start a grandchild that sleeps, print ``{"grandchild":<pid>}``,
                          then never exit by itself.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading


async def echo(limit: int) -> None:
    import anyio

    from acp_runtime import stdio_transport
    from acp_runtime.transports import MessageTooLarge

    transport = stdio_transport(max_message_bytes=limit)
    try:
        while True:
            try:
                message = await transport.receive()
            except MessageTooLarge as exc:
                message = json.dumps({"too_large": len(exc.prefix)}).encode()
            except anyio.EndOfStream:
                return
            await transport.send(message)
    finally:
        await transport.aclose()


async def echo_after_stray_output() -> None:
    import anyio

    from acp_runtime import stdio_transport

    transport = stdio_transport()
    print("stray print")
    await transport.send(b'{"ready":true}')
    child = [sys.executable, "-c", "import os; print('child read', os.read(0, 100))"]
    await anyio.run_process(child, stdin=None, stdout=None, stderr=None)  # inherits our stdio
    await transport.send(await transport.receive())
    await transport.aclose()


def say(value: object) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def wait_forever() -> None:
    threading.Event().wait()


def main() -> None:
    mode = sys.argv[1]
    if mode == "echo":
        import anyio

        anyio.run(echo, int(sys.argv[3]), backend=sys.argv[2])
    elif mode == "echo-stray":
        import anyio

        anyio.run(echo_after_stray_output, backend=sys.argv[2])
    elif mode == "stderr":
        sys.stderr.write("first line\n\nsecond line\r\n")
        sys.stderr.flush()
        sys.stdin.buffer.read()
    elif mode == "env":
        say({"cwd": os.getcwd(), "value": os.environ.get("ACP_TEST_VALUE")})
        sys.stdin.buffer.read()
    elif mode == "ignore-eof":
        say({"ready": True})
        wait_forever()
    elif mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        say({"ready": True})
        wait_forever()
    elif mode == "grandchild":
        child = subprocess.Popen(
            [sys.executable, "-c", "import threading; threading.Event().wait()"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        say({"grandchild": child.pid})
        wait_forever()
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
