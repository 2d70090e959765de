"""``src/acp_runtime/_unicode_15_1.py`` is what codegen/unicode_table.py writes: run on
Python 3.13 (Unicode 15.1) with a Python 3.10 (Unicode 13.0) found as the baseline."""

from __future__ import annotations

import unicodedata

import pytest

from codegen import unicode_table


def test_regenerating_the_unicode_table_gives_the_committed_bytes() -> None:
    if unicodedata.unidata_version != unicode_table.VERSION:
        pytest.skip(f"regenerates on Unicode {unicode_table.VERSION} (Python 3.13)")
    baseline = unicode_table.find_baseline()
    if baseline is None:
        pytest.skip("no Python 3.10 (Unicode 13.0) found as the baseline: set UNICODE_13_PYTHON")
    text = unicode_table.render(unicode_table._baseline_properties(baseline))  # pyright: ignore[reportPrivateUsage]
    assert unicode_table.TARGET.read_bytes() == text.encode("utf-8")
