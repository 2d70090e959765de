"""Forward-compatible parsing: the schema's ``x-deserialize-*`` annotations, at run time.

The ACP schemas mark how a receiver tolerates a newer or sloppier peer (the Rust SDK's
``serde_with`` rules): ``x-deserialize-default-on-error`` (an invalid value takes the
field's default, or the field is absent), ``x-deserialize-skip-invalid-items`` (invalid
array items are dropped, the rest kept) and ``x-deserialize-default-on-null`` (``null``
takes the empty value). The generator writes them as the markers :data:`DefaultOnError`,
:data:`SkipInvalidItems` and :data:`DefaultOnNull` in ``Annotated[...]``; pydantic keeps
them in ``FieldInfo.metadata`` and does not validate with them, so valid input pays
nothing. Only when strict validation fails does ``salvage.validate_salvaging`` look for
the marked points that catch every error (``_salvage_walk``), repair a copy of the input
there and validate again. Every salvage is logged (logger ``acp_runtime._salvage``: the
method, the JSON path and the error type, never the value) and kept on the parsed model:
:func:`salvaged`. :data:`NotNull` is the one marker that changes validation: an optional
array or map the schema keeps from ``null`` refuses it (natively), as the schema says.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, cast

Rule = Literal["default-on-error", "skip-invalid-items", "default-on-null"]


class Lenient:
    """One ``x-deserialize-*`` rule on a generated field (see the module docstring)."""

    __slots__ = ("rule",)

    def __init__(self, rule: Rule) -> None:
        self.rule: Rule = rule

    def __repr__(self) -> str:
        return f"Lenient({self.rule!r})"

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        # ``model_json_schema()`` carries the annotation as the ACP schema does
        out: Any = handler(schema)
        _mark(out, f"x-deserialize-{self.rule}")
        return out


def _mark(json_schema: Any, key: str) -> None:
    if isinstance(json_schema, dict):
        json_schema[key] = True


DefaultOnError = Lenient("default-on-error")
"""``x-deserialize-default-on-error``: an invalid value takes the default (absent if optional)."""

SkipInvalidItems = Lenient("skip-invalid-items")
"""``x-deserialize-skip-invalid-items``: array items that fail validation are dropped."""

DefaultOnNull = Lenient("default-on-null")
"""``x-deserialize-default-on-null``: ``null`` takes the empty value (``[]`` or ``{}``)."""


class _NotNull:
    """The schema allows no ``null`` here, though the optional field is ``X | None`` in
    Python (its default when absent): validation refuses ``null``, natively, so that the
    salvage can take the empty value (``[]`` or ``{}``), as Rust's ``#[serde(default)]``
    and the TypeScript SDK do, and report it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NotNull"

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        schema: Any = handler(source)
        return schema["schema"] if schema.get("type") == "nullable" else schema


NotNull = _NotNull()
"""Generated on optional lenient arrays and maps whose schema type is not nullable."""


class Salvage(NamedTuple):
    """What one salvage changed: where (JSON path of the field or item), why (the pydantic
    error type that made it invalid) and how (``"default"``, ``"dropped"`` or ``"null"``)."""

    path: tuple[str | int, ...]
    error_type: str
    action: str

    @property
    def where(self) -> str:
        """The path as text: ``update.entries[1]`` (``$`` for the value itself)."""
        return format_path(self.path)


SALVAGED_KEY = "__acp_salvaged__"
"""The instance ``__dict__`` key holding a parsed model's salvages (not a field: pydantic
neither dumps nor compares it)."""


def format_path(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "$"


def salvaged(value: object) -> tuple[Salvage, ...]:
    """What was salvaged while parsing ``value`` (empty when it was valid as it came)."""
    state: dict[str, Any] = getattr(value, "__dict__", {})
    found: Any = state.get(SALVAGED_KEY, ())
    return cast("tuple[Salvage, ...]", found)
