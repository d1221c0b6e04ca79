#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e '.[test]'
.venv/bin/python -m pytest -q "$@"
