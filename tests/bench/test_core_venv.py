"""``bench/core_venv.py``: cold start measured in an environment like a user's holds this
SDK and its core dependencies only, at the versions of the environment running the bench."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

from tests.bench import run_python

# make test-bench (and CI) runs these; make test leaves them out
pytestmark = pytest.mark.bench

MAKE_AND_LOOK = """
import json, subprocess, sys
from pathlib import Path
from bench.core_venv import core_venv, distributions
python = core_venv(Path(sys.argv[1]))
code = "import acp_runtime, pydantic; print(acp_runtime.__file__, pydantic.VERSION)"
where, version = subprocess.run(
    [str(python), "-c", code], check=True, capture_output=True, text=True
).stdout.split()
print(json.dumps({"installed": distributions(python), "where": where, "pydantic": version}))
"""

CORE = {"acp-typed", "annotated-types", "anyio", "pydantic", "pydantic-core", "typing-extensions"}
"""The SDK, its three core dependencies and what pydantic needs."""
ALSO_ALLOWED = {"idna", "sniffio", "exceptiongroup", "typing-inspection"}
"""What anyio and pydantic need on some versions and Pythons."""


def test_the_core_venv_holds_the_sdk_and_its_core_dependencies_only(tmp_path: Path) -> None:
    done = run_python("-c", MAKE_AND_LOOK, str(tmp_path / "venv"), timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    installed = {name.lower().replace("_", "-") for name in found["installed"]}
    assert CORE <= installed <= CORE | ALSO_ALLOWED, installed
    assert found["where"].startswith(str(tmp_path))  # the installed wheel, not src/
    assert found["pydantic"] == importlib.metadata.version("pydantic")
