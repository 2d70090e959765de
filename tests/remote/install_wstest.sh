#!/bin/sh
# Install the Autobahn|Testsuite (wstest) for tests/remote/test_autobahn.py into $1
# (default .autobahn, git-ignored): a Python 2.7 virtualenv, since wstest runs on 2.7 only.
# Where no Python 2.7 is found (PY27, pyenv's, or python2.7 on PATH) it says so and exits 0:
# the Autobahn tests are then skipped with that reason.
set -eu
dir="${1:-.autobahn}"
py27=""
for candidate in "${PY27:-}" "$HOME"/.pyenv/versions/2.7*/bin/python python2.7; do
	if [ -n "$candidate" ] && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (2, 7))' 2>/dev/null; then
		py27="$candidate"
		break
	fi
done
if [ -z "$py27" ]; then
	echo "Python 2.7 not found: the Autobahn tests will be skipped"
	exit 0
fi
rm -rf "$dir"
# virtualenv 20.15 is the last that runs on Python 2.7: installed beside the venv, not into
# the interpreter's own site-packages
"$py27" -m pip install --quiet --disable-pip-version-check --target "$dir/virtualenv" "virtualenv==20.15.1"
PYTHONPATH="$dir/virtualenv" "$py27" -m virtualenv --quiet "$dir/venv"
"$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check "autobahntestsuite==25.10.1"
"$dir/venv/bin/wstest" --autobahnversion
touch "$dir/.installed"
