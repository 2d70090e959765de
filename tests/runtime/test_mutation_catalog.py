"""The mutation check (``python -m tests.runtime.mutation_check``) is only as good as its
catalogue: every mutation must still apply to the code as it is, or it silently stops
checking anything (two did, after a refactor, before this test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.mutation_check import MUTATIONS, Mutation

SRC = Path(__file__).resolve().parents[2] / "src" / "acp_runtime"


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.key)
def test_mutation_still_applies(mutation: Mutation) -> None:
    for file, old, _new in ((mutation.file, mutation.old, mutation.new), *mutation.more):
        assert (SRC / file).read_text().count(old) == 1, f"{mutation.key}: {old!r} in {file}"
