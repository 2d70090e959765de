"""Jinja2 rendering of the per-version ``methods.py``, ``handlers.py`` and ``__init__.py``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jinja2

from .method_table import Method

TEMPLATES = Path(__file__).parent / "templates"

SIDE_ORDER = {"agent": 0, "client": 1, "proxy": 2}
"""Handler classes come in this order; a side a future schema adds comes after, by name."""

SIDE_DOCS = {
    "agent": "Methods the agent handles: what the client sends to the agent.",
    "client": "Methods the client handles: what the agent sends to the client.",
    "proxy": "Methods a proxy handles: what a conductor sends to a proxy in a chain.",
}


def docstring(text: str, indent: int) -> str:
    """A triple-quoted docstring for ``text``, escaped so Python reads back exactly ``text``."""
    text = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if not text:
        return '""""""'
    pad = " " * indent
    lines = [(pad + line).rstrip() if line else "" for line in text.splitlines()]
    if len(lines) == 1 and len(lines[0]) + 6 < 100 and not text.endswith('"'):
        return f'"""{text}"""'
    return '"""\n' + "\n".join(lines) + f'\n{pad}"""'


def pyrepr(value: object) -> str:
    return repr(value)


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=False,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["pyrepr"] = pyrepr
    return env


@dataclass(frozen=True)
class Binding:
    """What the templates need to know about one method."""

    name: str
    kind: str
    side: str
    params: str
    params_type: str
    result_type: str
    const_name: str
    py_name: str
    doc: str
    docstring: str
    shared: bool = False  # defined in ``vN/_shared_methods.py`` (codegen/sharing.py)
    requires: str | None = None


def binding(method: Method, shared: bool = False) -> Binding:
    return Binding(
        name=method.name,
        kind=method.kind,
        side=method.side,
        params=method.params,
        params_type=method.params,
        result_type=method.result or "None",
        const_name=method.const_name,
        py_name=method.py_name,
        doc=method.description.strip(),
        docstring=docstring(method.description, 8),
        shared=shared,
        requires=method.requires,
    )


def render(template: str, **context: object) -> str:
    text = _env().get_template(template).render(**context)
    return text.rstrip("\n") + "\n"
