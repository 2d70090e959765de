"""API diff between two ACP schema sets, to decide the next package version.

Library use::

    from codegen.apidiff import diff_paths
    report = diff_paths(Path("schema/cache/2.0.0"), Path("schema/cache/2.4.0"))
    report.bump            # Bump.MAJOR / MINOR / PATCH / NONE
    report.schemas[0].changes  # [Change(category, subject, action, path, detail), ...]

Command line: ``python -m codegen diff OLD NEW [--json]`` (or ``python -m codegen.apidiff``).
It works on the raw JSON schemas, independent of the generator's output.
"""

from .cli import main
from .inputs import InputError, diff_paths
from .model import Bump, Category, Change, DiffReport, MethodEntry, SchemaDiff
from .schemas import diff_schemas

__all__ = [
    "Bump",
    "Category",
    "Change",
    "DiffReport",
    "InputError",
    "MethodEntry",
    "SchemaDiff",
    "diff_paths",
    "diff_schemas",
    "main",
]
