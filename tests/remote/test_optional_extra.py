"""The remote transports are an optional extra: the core import does not pull them in."""

from __future__ import annotations

import subprocess
import sys


def test_import_acp_runtime_imports_no_http_library() -> None:
    code = (
        "import sys, acp_runtime\n"
        "loaded = sorted(m for m in ('httpx', 'httpx_ws', 'wsproto', 'hypercorn',"
        " 'acp_runtime.remote') if m in sys.modules)\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""


def test_the_remote_package_loads_its_libraries() -> None:
    """The check above can fail: importing the remote package does load them."""
    code = "import sys, acp_runtime.remote\nprint('wsproto' in sys.modules)\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "True"
