"""Interop tests against the TypeScript SDK and acpx (Node peers)."""
