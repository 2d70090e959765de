# One-command entry points. Every target installs what it needs first, so a
# fresh clone works with `make demo` or `make test` and nothing else.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test check typecheck lint clean dist docs fetch-schemas generate codegen-check release-check realworld-agents

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

# Node peers for the interop tests (TypeScript SDK, acpx); skipped where npm is absent.
NODE_STAMP := tests/interop/node_modules/.installed
$(NODE_STAMP): tests/interop/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix tests/interop --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "npm not found: interop tests will be skipped"; fi

setup: $(STAMP) $(NODE_STAMP)

# Autobahn|Testsuite (wstest, on Python 2.7) for tests/remote/test_autobahn.py, in .autobahn/
# (git-ignored); skipped where Python 2.7 is absent. `make autobahn` runs the suite alone.
.PHONY: autobahn-setup autobahn
AUTOBAHN_STAMP := .autobahn/.installed
$(AUTOBAHN_STAMP): tests/remote/install_wstest.sh
	sh tests/remote/install_wstest.sh .autobahn
autobahn-setup: $(AUTOBAHN_STAMP)
autobahn: setup autobahn-setup
	$(PY) -m pytest tests/remote/test_autobahn.py -p no:randomly -rP
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

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

typecheck: setup
	$(PY) -m mypy
	$(PY) -m pyright

lint: setup
	$(PY) -m ruff check src codegen distributions examples bench tests

check: setup lint typecheck codegen-check

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
