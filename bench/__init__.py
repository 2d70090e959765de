"""Benchmarks. ``python -m bench`` runs the runtime suite against the peers (see README.md)."""
