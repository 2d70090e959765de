"""``python -m bench``: the runtime benchmark suite (this SDK vs the PyPI package vs the TS SDK)."""

from bench.runtime_bench import main

if __name__ == "__main__":
    raise SystemExit(main())
