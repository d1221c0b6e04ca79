#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it:
#   1. servekit and its test dependencies in .venv
#   2. the layer contract (import-linter, [tool.importlinter] in pyproject.toml), then the
#      fast suite (no engine needed)
#   3. the real engines (vLLM CPU, MAX), each in its own pinned environment, and a Docker
#      engine with a base image built without any registry (scripts/install_docker.sh; a
#      dockerd it starts is stopped when this script ends), then the slow tests that drive
#      them (marker `engine`).
# Extra arguments go to both pytest runs.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e '.[test]'

export SERVEKIT_ENGINES_DIR="${SERVEKIT_ENGINES_DIR:-$PWD/.servekit-ci/engines}"

run_pytest() {
  local rc=0
  .venv/bin/python -m pytest -q "$@" || rc=$?
  # 5 = nothing collected for this selection, which is not a failure here
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then exit "$rc"; fi
}

echo "== import layers"
.venv/bin/lint-imports --no-cache --no-logo

bash scripts/install_system_tools.sh
# axe-core for the builder's accessibility test (a few seconds); without it that test skips, saying why
bash scripts/install_axe.sh || echo "axe-core was not installed: tests/web's accessibility test will skip"
echo "== fast tests"
run_pytest -m "not engine" -n 2 "$@"

if [ "${SERVEKIT_SKIP_ENGINES:-0}" != "1" ]; then
  echo "== engine environments"
  bash scripts/install_engines.sh
  echo "== Docker engine and base image"
  trap 'bash scripts/install_docker.sh stop' EXIT
  bash scripts/install_docker.sh
  echo "== engine tests"
  run_pytest -m engine "$@"
fi
