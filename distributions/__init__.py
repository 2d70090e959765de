"""Build the per-version distributions of this repository (``python -m distributions``).

One repository, several distributions: the handwritten runtime (``acp-typed-runtime``) and one
generated package per protocol version (``acp-typed-v1``, ``acp-typed-v2``), each
with its unstable superset inside. ``distributions.toml`` lists them; every version number
is derived, never written by hand: the runtime's from the root ``pyproject.toml``, a
generated package's from the schema release it was generated from (the codegen lock).
"""
