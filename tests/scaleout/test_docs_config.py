"""docs/deploying.md shows the HAProxy configuration the tests run, as rendered."""

from __future__ import annotations

from pathlib import Path

from .haproxy import Backend, render_config

PAGE = Path(__file__).resolve().parents[2] / "docs" / "deploying.md"


def test_the_deploying_page_shows_the_tested_configuration() -> None:
    backends = [Backend(f"w{n}", f"127.0.0.1:800{n}") for n in range(1, 5)]
    config = render_config(":443 ssl crt /etc/haproxy/certs/agent.pem", backends)
    assert f"```text\n{config}```" in PAGE.read_text(encoding="utf-8")
