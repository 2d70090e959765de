"""Run datamodel-code-generator (pinned 0.89.0) in-process on a preprocessed schema."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

DCG_VERSION = "0.89.0"

#: Options chosen in the trial (see docs/codegen.md for why each one is here).
DCG_OPTIONS: tuple[str, ...] = (
    "--input-file-type", "jsonschema",
    "--output-model-type", "pydantic_v2.BaseModel",
    "--target-python-version", "3.10",
    "--use-annotated",
    "--field-constraints",
    "--use-union-operator",
    "--use-standard-collections",
    "--use-double-quotes",
    "--snake-case-field",
    "--allow-population-by-field-name",
    "--remove-special-field-name-prefix",
    "--extra-fields", "allow",
    "--strict-nullable",
    "--use-schema-description",
    "--use-field-description",
    "--enum-field-as-literal", "all",
    "--use-type-alias-type",
    "--use-title-as-name",
    "--type-mappings", "string+uri=string", "string+date-time=string", "string+regex=string",
    "--skip-root-model",
    "--disable-timestamp",
    "--formatters", "builtin",
    "--keep-model-order",
    "--field-extra-keys",
    "x-deserialize-default-on-error", "x-deserialize-skip-invalid-items",
    "x-deserialize-default-on-null", "x-acp-not-null", "x-acp-uri",
)  # fmt: skip


def check_version() -> None:
    from importlib.metadata import version

    found = version("datamodel-code-generator")
    if found != DCG_VERSION:
        raise RuntimeError(
            f"datamodel-code-generator {found} installed; the generator is pinned to {DCG_VERSION} "
            "(its naming and output change between releases): pip install -e '.[codegen]'"
        )


def run_dcg(schema: dict[str, Any]) -> str:
    """Return the Python source dcg generates for ``schema``."""
    from datamodel_code_generator.__main__ import main

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "schema.json"
        dst = Path(tmp) / "models.py"
        src.write_text(json.dumps(schema, sort_keys=False), encoding="utf-8")
        err = io.StringIO()
        with warnings.catch_warnings(), contextlib.redirect_stderr(err):
            warnings.simplefilter("ignore")
            code = main([*DCG_OPTIONS, "--input", str(src), "--output", str(dst)])
        if code != 0:
            raise RuntimeError(f"datamodel-code-generator failed ({code}):\n{err.getvalue()}")
        return dst.read_text(encoding="utf-8")
