# One-command entry points. Every target installs what it needs first, so a
# fresh clone works with `make demo` or `make test` and nothing else.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup lock lock-check demo test test-fast test-bench check typecheck lint clean dist docs fetch-schemas generate codegen-check release-check realworld-agents

# Dependencies come from the lock file (pinned versions and hashes, every supported Python),
# installed by uv, which is bootstrapped into the venv at a pinned version.
UV_VERSION := 0.13.9
UV := $(VENV)/bin/uv
LOCK := requirements-dev.lock

$(UV):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"

# --compile-bytecode writes the .pyc files pip would (uv leaves them out by default), so
# the suite's first run does not compile every dependency in each of its processes.
$(STAMP): pyproject.toml $(LOCK) | $(UV)
	$(UV) pip install --quiet --python $(PY) --require-hashes --compile-bytecode -r $(LOCK)
	$(UV) pip install --quiet --python $(PY) --no-deps -e .
	touch $(STAMP)

# Re-resolve the lock after a dependency change in pyproject.toml (keeps the other pins;
# LOCK_ARGS=--upgrade moves every pin to the newest allowed version). lock-check (in make
# check) fails where the lock no longer matches pyproject.toml.
COMPILE_LOCK := $(UV) pip compile pyproject.toml --extra dev --universal --python-version 3.10 \
	--generate-hashes --custom-compile-command "make lock" --quiet
lock: | $(UV)
	$(COMPILE_LOCK) $(LOCK_ARGS) -o $(LOCK)

lock-check: | $(UV)
	cp $(LOCK) $(VENV)/lock-check.txt
	$(COMPILE_LOCK) -o $(VENV)/lock-check.txt
	@cmp -s $(LOCK) $(VENV)/lock-check.txt || { diff -u $(LOCK) $(VENV)/lock-check.txt | head -40; \
		echo "$(LOCK) does not match pyproject.toml: run make lock"; exit 1; }

# Node peers for the interop tests (TypeScript SDK, acpx); skipped where npm is absent.
NODE_STAMP := tests/interop/node_modules/.installed
$(NODE_STAMP): tests/interop/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix tests/interop --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "npm not found: interop tests will be skipped"; fi

setup: $(STAMP) $(NODE_STAMP)

# Autobahn|Testsuite (wstest, on Python 2.7) for tests/remote/test_autobahn.py, in .autobahn/
# (git-ignored); skipped where Python 2.7 is absent. `make autobahn` runs it (make test does not).
.PHONY: autobahn-setup autobahn
AUTOBAHN_STAMP := .autobahn/.installed
$(AUTOBAHN_STAMP): tests/remote/install_wstest.sh
	sh tests/remote/install_wstest.sh .autobahn
autobahn-setup: $(AUTOBAHN_STAMP)
autobahn: setup autobahn-setup
	$(PY) -m pytest $(XDIST) tests/remote/test_autobahn.py -p no:randomly -rP
# HAProxy (Debian's package) for the scale-out tests, tests/scaleout/; .ci/run calls it.
# Without apt-get nothing is installed and those tests skip, saying why.
.PHONY: haproxy
haproxy:
	@if command -v haproxy >/dev/null 2>&1 || test -x /usr/sbin/haproxy; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
		sudo=$$(test "$$(id -u)" = 0 || echo sudo); \
		$$sudo apt-get update -q && $$sudo apt-get install -y -q --no-install-recommends haproxy; \
	else echo "apt-get not found: the scale-out tests will be skipped"; fi
# A real third-party agent for tests/realworld (run with --run-slow): codex-acp from npm,
# into the git-ignored tests/realworld/node_modules.
realworld-agents: setup
	npm install --prefix tests/realworld --no-save --no-audit --no-fund --loglevel=error \
		@zed-industries/codex-acp@0.16.0

demo: setup
	$(PY) examples/client.py -- $(PY) examples/echo_agent.py

# The suite runs on every core (pytest-xdist; XDIST= runs it in one process) and in a random
# order (pytest-randomly prints "Using --randomly-seed=N"; PYTEST_ARGS=--randomly-seed=N
# replays an order, PYTEST_ARGS="-p no:randomly" keeps the file order).
# -n auto is two workers per core (tests/conftest.py): half the suite's time is waiting.
XDIST ?= -n auto --dist loadgroup

# The suite starts hundreds of Python processes (agents, peers, tools): with
# PYTHONDONTWRITEBYTECODE set (some shells set it) each would compile the SDK from source.
test test-fast test-bench autobahn: export PYTHONDONTWRITEBYTECODE :=

# Everything but the long runs that check tools rather than the SDK: the benchmark smokes
# (make test-bench) and the Autobahn|Testsuite run (make autobahn). CI runs all three.
test: setup
	$(PY) -m pytest $(XDIST) -m "not bench and not autobahn" $(PYTEST_ARGS)

# The benchmark smokes: every `python -m bench` mode and the A/B and codegen benches, --quick.
test-bench: setup
	$(PY) -m pytest $(XDIST) -m bench $(PYTEST_ARGS)

# The inner loop (about 45 s of CPU over two workers): runtime, codegen and the in-process
# suites. Leaves out the Node.js interop, the packaging builds, the mypy/pyright runs, the
# docs, the reliability rigs and the benchmark smokes (make test runs them all).
FAST_TESTS := tests/runtime tests/codegen tests/contrib tests/lenient tests/traps \
	tests/transport tests/proxies tests/observability tests/authoring tests/mcp_over_acp \
	tests/test_layering.py tests/test_methods.py
test-fast: setup
	$(PY) -m pytest $(XDIST) -m "not slow and not bench" $(FAST_TESTS) $(PYTEST_ARGS)

typecheck: setup
	$(PY) -m mypy
	$(PY) -m pyright

lint: setup
	$(PY) -m ruff check src codegen distributions examples bench tests

check: setup lint typecheck codegen-check lock-check

# Locked ACP schemas (schema/lock.json) into schema/cache/, hash-checked; needs npm.
fetch-schemas: setup
	$(PY) -m codegen fetch --all

generate: fetch-schemas
	$(PY) -m codegen generate

codegen-check: fetch-schemas
	$(PY) -m codegen check

dist: setup
	rm -rf dist
	$(PY) -m distributions --out dist

# What the release workflow uploads: build every distribution into dist/, then twine check
# --strict, check-wheel-contents and the dependency-name check (python -m distributions.release).
release-check: setup
	rm -rf dist
	$(PY) -m distributions.release --out dist

docs: setup
	$(PY) -m mkdocs build --strict

clean:
	rm -rf $(VENV) schema/cache dist site
