"""The structured result of an API diff: one :class:`Change` per difference found."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Category(str, Enum):
    """How a change affects users; the order is from most to least severe."""

    WIRE_BREAKING = "wire-breaking"
    """A peer built against the old schema can send or receive something the new one rejects."""
    PYTHON_API = "python-api"
    """The wire is unchanged but a generated Python name disappears or is renamed."""
    WIRE_ADDITIVE = "wire-additive"
    """New methods, types, optional fields, variants or enum values; old messages stay valid."""
    ANNOTATION_ONLY = "annotation-only"
    """Titles, defaults and ``x-*`` keywords: no validation change, maybe generated defaults."""
    DESCRIPTION_ONLY = "description-only"
    """Doc text only (after doc-URL normalization)."""


class Bump(str, Enum):
    """The semantic version bump a set of changes calls for."""

    MAJOR = "major"
    MINOR = "minor"
    PATCH = "patch"
    NONE = "none"


_BUMP_OF: dict[Category, Bump] = {
    Category.WIRE_BREAKING: Bump.MAJOR,
    Category.PYTHON_API: Bump.MAJOR,
    Category.WIRE_ADDITIVE: Bump.MINOR,
    Category.ANNOTATION_ONLY: Bump.PATCH,
    Category.DESCRIPTION_ONLY: Bump.PATCH,
}
_BUMP_ORDER = (Bump.NONE, Bump.PATCH, Bump.MINOR, Bump.MAJOR)


def bump_for(categories: list[Category]) -> Bump:
    """The largest bump any of ``categories`` needs (``NONE`` for no changes)."""
    best = Bump.NONE
    for category in categories:
        candidate = _BUMP_OF[category]
        if _BUMP_ORDER.index(candidate) > _BUMP_ORDER.index(best):
            best = candidate
    return best


@dataclass(frozen=True)
class Change:
    """One difference between the old and the new schema.

    ``subject`` says what changed (``method``, ``def``, ``field``, ``variant``,
    ``enum-value``, ``type``, ``constraint``, ``union``, ``envelope``,
    ``annotation``, ``description``), ``action`` how (``added``, ``removed``,
    ``changed``, ``renamed``, ``now-required``, ``now-optional``), ``path`` where
    (``PromptRequest.prompt[]``, ``SessionUpdate[sessionUpdate=plan]``), and
    ``detail`` a short human explanation.
    """

    category: Category
    subject: str
    action: str
    path: str
    detail: str = ""


@dataclass(frozen=True)
class MethodEntry:
    """One row of the method table: a method as a request or notification for one handler."""

    method: str
    kind: str  # "request" | "notification"
    handler: str  # the schema's x-side: "agent", "client", "protocol", "proxy", "both"
    params: str  # def name
    result: str | None  # def name for requests


@dataclass
class SchemaDiff:
    """The changes between one old and one new schema file."""

    label: str
    old_path: str
    new_path: str
    changes: list[Change] = field(default_factory=list[Change])
    methods_old: int = 0
    methods_new: int = 0
    defs_old: int = 0
    defs_new: int = 0
    url_only_descriptions: int = 0
    """Descriptions that differed only in doc URLs and were therefore not reported."""

    @property
    def bump(self) -> Bump:
        return bump_for([c.category for c in self.changes])

    def count(self, category: Category) -> int:
        return sum(1 for c in self.changes if c.category is category)


@dataclass
class DiffReport:
    """The diff of two schema sets (one or more paired files)."""

    schemas: list[SchemaDiff] = field(default_factory=list[SchemaDiff])
    only_old: list[str] = field(default_factory=list[str])
    """Schema files present only in the old set (a removed protocol variant)."""
    only_new: list[str] = field(default_factory=list[str])
    """Schema files present only in the new set (an added protocol variant)."""

    @property
    def bump(self) -> Bump:
        categories = [c.category for s in self.schemas for c in s.changes]
        if self.only_old:
            categories.append(Category.WIRE_BREAKING)
        if self.only_new:
            categories.append(Category.WIRE_ADDITIVE)
        return bump_for(categories)
