"""``SPEC_COVERAGE.md`` cannot rot: every behaviour ID of the design has a row naming at
least one test, and every test the file names exists.

The IDs are copied here from the design's section 4 (the tests must not read anything
outside the repository); ``HYGIENE`` stands for its JSON-RPC hygiene paragraph. ``REL-n``
are the reliability rules for hostile peers (issue #16), defined in the table itself.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TABLE = Path(__file__).with_name("SPEC_COVERAGE.md")

SPEC_IDS = (
    [f"OUT-{n}" for n in range(1, 12)]
    + [f"IN-{n}" for n in range(1, 7)]
    + [f"PROXY-{n}" for n in range(1, 6)]
    + ["V2-1", "HYGIENE"]
)
GAP_IDS = [f"GAP-{n}" for n in range(1, 27)]
REL_IDS = [f"REL-{n}" for n in range(1, 7)]

ROW = re.compile(r"^\|\s*(?P<id>(?:OUT|IN|PROXY|V2|GAP|REL)-\d+|HYGIENE)\s*\|(?P<rest>.*)$", re.M)
TEST_REF = re.compile(r"`(?P<path>tests/[\w/]+\.py)::(?P<name>test_\w+)`")


def rows() -> dict[str, list[tuple[str, str]]]:
    table: dict[str, list[tuple[str, str]]] = {}
    for row in ROW.finditer(TABLE.read_text()):
        assert row["id"] not in table, f"{row['id']} has two rows"
        table[row["id"]] = [(ref["path"], ref["name"]) for ref in TEST_REF.finditer(row["rest"])]
    return table


def test_every_behaviour_id_has_a_row_naming_tests() -> None:
    table = rows()
    assert [i for i in table if not i.startswith(("GAP-", "REL-"))] == SPEC_IDS
    assert [i for i in table if i.startswith("GAP-")] == GAP_IDS
    assert [i for i in table if i.startswith("REL-")] == REL_IDS
    assert [i for i in SPEC_IDS + REL_IDS if not table[i]] == []


def test_every_named_test_exists() -> None:
    missing = [
        f"{spec_id}: {path}::{name}"
        for spec_id, refs in rows().items()
        for path, name in refs
        if not (REPO / path).is_file()
        or not re.search(rf"^(?:async )?def {name}\(", (REPO / path).read_text(), re.M)
    ]
    assert missing == []


def test_the_checker_sees_a_missing_test() -> None:
    """The pattern really distinguishes a defined test from a merely mentioned one."""
    source = "async def test_real(x) -> None:\n    test_mentioned()\n"
    assert re.search(r"^(?:async )?def test_real\(", source, re.M)
    assert not re.search(r"^(?:async )?def test_mentioned\(", source, re.M)
