"""Typed ACP protocol packages generated from the locked JSON schemas (see ``codegen/``)."""
