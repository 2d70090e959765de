"""Client drivers: one process per (implementation, run), each printing one JSON record.

The Python drivers share :mod:`bench.drivers.harness` (the workload loops); the
TypeScript driver (``bench/peers/ts_client.mjs``) runs the same loops in Node.
"""
