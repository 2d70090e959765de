"""``python -m acp_runtime.check [options] -- <agent command...>``: check an ACP agent
written in any language over stdio; see ``docs/testing.md``."""

from __future__ import annotations

import argparse
import sys

import anyio

from ._checks import Options, run_checks
from ._report import as_json, exit_status, table


def parse_args(argv: list[str]) -> tuple[Options, bool]:
    parser = argparse.ArgumentParser(
        prog="python -m acp_runtime.check",
        description="Check an ACP agent's conformance over stdio.",
    )
    parser.add_argument("--protocol", choices=["v1", "v2"], default="v1")
    parser.add_argument("--auth-method", help="authenticate with this method id")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set in the agent's environment (repeatable)",
    )
    parser.add_argument("--prompt", default="Hello", help="the text of the prompt turn")
    parser.add_argument(
        "--cancel-prompt", help="a prompt that keeps the agent busy, for the cancellation checks"
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds to wait for each answer"
    )
    parser.add_argument(
        "--cancel-bound", type=float, default=3.0, help="seconds a cancelled turn may take to end"
    )
    parser.add_argument(
        "--eof-bound", type=float, default=3.0, help="seconds the agent may take to exit at EOF"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("command", nargs="+", help="the agent command (after --)")
    args = parser.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.env)
    options = Options(
        command=args.command,
        protocol=args.protocol,
        auth_method=args.auth_method,
        env=env,
        prompt=args.prompt,
        cancel_prompt=args.cancel_prompt,
        timeout=args.timeout,
        cancel_bound=args.cancel_bound,
        eof_bound=args.eof_bound,
    )
    return options, args.json


def main(argv: list[str]) -> int:
    options, json_output = parse_args(argv)
    results = anyio.run(run_checks, options)
    print(as_json(results) if json_output else table(results))
    return exit_status(results)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
