"""MkDocs hook: show the runtime's Sphinx-style roles (:class:`X`) as plain code in API pages.

The source docstrings use Sphinx roles, which Markdown renders as ``:class:<code>X</code>``;
this drops the role prefix so the reference reads ``X``.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|mod|exc|data|obj|const):(?=<code>)")


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub("", html)
