"""The hostile-peer figures side by side: one Markdown row per scenario, one column per
process, from the records of one or more runs of :mod:`.hostile_peers` (``--json``).

    .venv/bin/python -m tests.reliability.hostile_table run1.jsonl run2.jsonl

A figure that differs between runs shows as its range (``low-high``), so the table says
how much a shared machine moved it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Records = Sequence[dict[str, Any]]

COLUMNS = [
    ("python (baseline)", "python client (baseline)"),
    ("python", "python client"),
    ("typescript",),
]


def span(records: Records, key: str, unit: str = "", digits: int = 1) -> str:
    """``key``'s value over the runs: one number, or the range it took."""
    values = [r[key] for r in records if r.get(key) is not None]
    if not values:
        return "n/a"
    low, high = (f"{value:,.{digits}f}" for value in (min(values), max(values)))
    return (low if low == high else f"{low}-{high}") + unit


def flood(records: Records) -> str:
    deltas = [
        {"delta": r["peak_rss_mib"] - r["base_rss_mib"], **r}
        for r in records
        if "peak_rss_mib" in r
    ]
    taken = span(records, "taken", digits=0)
    reading = (
        f"stopped reading after {taken} lines"
        if all(r.get("stopped_reading") for r in records)
        else f"read all {taken}"
    )
    return f"{span(records, 'peak_rss_mib', ' MiB')} (+{span(deltas, 'delta')}), {reading}"


def cancel(records: Records) -> str:
    return (
        f"{span(records, 'cancel_to_answer_ms', ' ms')}"
        f" ({span(records, 'messages_before_answer', digits=0)} messages first;"
        f" {span(records, 'read_to_answer_ms', ' ms')} from the peer's first read);"
        f" peak {span(records, 'peak_rss_mib', ' MiB')}"
    )


def bad_line(records: Records) -> str:
    return f"+{span(records, 'cost_mib', ' MiB')} (peak {span(records, 'peak_rss_mib', ' MiB')})"


def chunks(records: Records) -> str:
    ends = sorted({str(r.get("stop_reason")) for r in records})
    if any(r.get("cancel_ms") is None for r in records):
        turn = f"the turn ran to the end ({', '.join(ends)}) before the ping's answer"
    else:
        turn = f"cancel {span(records, 'cancel_ms', ' ms')} ({', '.join(ends)})"
    return f"ping {span(records, 'ping_ms', ' ms')}, {turn}"


def stderr_unread(records: Records) -> str:
    if all(r.get("ping_answered_ms") is not None for r in records):
        return f"ping answered in {span(records, 'ping_answered_ms', ' ms')}"
    answered = sum(r.get("ping_answered_ms") is not None for r in records)
    return (
        f"ping unanswered after 20 s in {len(records) - answered} of {len(records)} runs"
        f" (took {span(records, 'lines_taken', digits=0)} lines)"
    )


def quiet(records: Records) -> str:
    return span([{"mb": r["stderr_bytes"] / 1e6, **r} for r in records], "mb", " MB", 2)


CELLS: dict[str, Callable[[Records], str]] = {
    "pings_50k": flood,
    "pings_200k": flood,
    "bad_300k": flood,
    "cancel_50k": cancel,
    "bad_line": bad_line,
    "chunks": chunks,
    "stderr_unread": stderr_unread,
    "quiet": quiet,
}


def cell(records: Records) -> str:
    if not records:
        return "not run"
    failed = [r["error"] for r in records if "error" in r]
    if failed:
        return f"failed: {failed[0]}"
    return CELLS[records[0]["scenario"]](records)


def table(records: Records, headers: Sequence[str]) -> str:
    rows = ["| Scenario | Side | " + " | ".join(headers) + " |"]
    rows.append("|---|---|" + "---|" * len(headers))
    seen: list[tuple[str, str]] = []
    for record in records:
        side = "client" if "client" in record["target"] else "agent"
        if (record["scenario"], side) not in seen:
            seen.append((record["scenario"], side))
    for scenario, side in seen:
        here = [r for r in records if r["scenario"] == scenario]
        what = here[0]["what"]
        cells = [
            cell(
                [
                    r
                    for r in here
                    if r["target"] in names and (side == "client") == ("client" in r["target"])
                ]
            )
            for names in COLUMNS
        ]
        rows.append(f"| {what} | {side} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="JSON lines from hostile_peers --json")
    parser.add_argument(
        "--headers",
        default="before,after,TypeScript SDK agent",
        help="column titles: baseline, this checkout, TypeScript",
    )
    args = parser.parse_args(argv)
    records = [json.loads(line) for run in args.runs for line in run.read_text().splitlines()]
    print(table(records, args.headers.split(",")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
