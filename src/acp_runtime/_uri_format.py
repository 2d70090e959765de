"""The schemas' ``format: uri``, checked as the TypeScript SDK checks it (zod's ``z.url()``).

zod 4.6, which the TypeScript SDK 2.4.0 builds these fields with, trims the string
(JavaScript's ``String.prototype.trim``), asks the WHATWG URL parser whether it parses
(``URL.canParse``) and keeps the trimmed string with every tab, LF and CR removed. The
generator puts :data:`UriFormat` on every ``format: uri`` string, so a model accepts,
refuses and keeps what zod does; where the schema marks the field default-on-error, the
salvage drops a value zod drops (``acp_runtime._lenient``).

Most URIs are plain (``file:///...``, ``https://host/path``): pydantic-core takes those by
a pattern it checks natively, which costs no Python call; the rest go to
:func:`acp_runtime._whatwg_url.can_parse`.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic_core import core_schema

_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""What JavaScript's ``trim`` removes: WhiteSpace and LineTerminator (not Python's set)."""

PLAIN_URI = (
    r"^(?:(?:https?|wss?|ftp)://(?:[a-z0-9]+(?:-[a-z0-9]+)*\.)*[a-z][a-z0-9]*(?:-[a-z0-9]+)*"
    r"(?::[0-9]{0,4})?(?:[/?#][!-~]*)?|file:///[!-~]*)$"
)
"""URIs the URL parser accepts and zod keeps unchanged, matched without a Python call:
a special scheme, lower case; a host of lower-case letters, digits and inner single
hyphens (so no ``xn--`` label) whose last label starts with a letter (so it does not
"end in a number"); a port of at most four digits; then printable ASCII only (no space,
nothing to trim or strip). Anything else is checked by :func:`acp_runtime._whatwg_url.can_parse`."""


def zod_url(value: str) -> str:
    """What ``z.url()`` keeps of ``value``; ``ValueError`` where it refuses it."""
    # Imported by the first URI the pattern does not take: most agents never need the parser.
    from ._whatwg_url import can_parse, without_tab_or_newline

    trimmed = value.strip(_JS_WHITESPACE)
    if not can_parse(trimmed):
        raise ValueError("the WHATWG URL parser refuses it")
    return without_tab_or_newline(trimmed)


def _checked(schema: Any) -> Any:
    if schema.get("type") == "nullable":
        return {**schema, "schema": _checked(schema["schema"])}
    if schema.get("type") != "str":
        raise TypeError(f"UriFormat applies to a string, not {schema.get('type')!r}")
    plain = cast("core_schema.CoreSchema", {**schema, "pattern": PLAIN_URI})
    return core_schema.union_schema(
        [plain, core_schema.no_info_after_validator_function(zod_url, schema)],
        mode="left_to_right",
        # one error for the field, whichever way it failed: pydantic's for a bad URL
        custom_error_type="url_parsing",
        custom_error_context={"error": "one the WHATWG URL parser accepts"},
    )


class _UriFormat:
    """The ``format: uri`` check, as ``Annotated`` metadata on a ``str`` (or ``str | None``)
    field: type checkers still see the ``str``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UriFormat"

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return _checked(handler(source))

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        # ``model_json_schema()`` says ``format: uri``, as the ACP schema does
        uri = {"type": "string", "format": "uri"}
        if schema.get("type") == "nullable":
            return {"anyOf": [uri, {"type": "null"}]}
        return uri


UriFormat = _UriFormat()
"""Generated on every string the schema gives ``format: uri``."""
