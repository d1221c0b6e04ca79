#!/usr/bin/env bash
# axe-core (Deque's accessibility rules engine, https://github.com/dequelabs/axe-core) for the
# builder's accessibility test (tests/web/test_pages_browser.py injects axe.min.js through
# playwright). It comes from the npm registry at test time into a cache folder, never into the
# repository: .servekit-ci/axe/ (git-ignored), or $SERVEKIT_AXE_DIR. Needs npm (Debian's nodejs
# package ships it; installed here when missing). Costs a few seconds; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="4.14.1"
DIR="${SERVEKIT_AXE_DIR:-$PWD/.servekit-ci/axe}"
FILE="$DIR/node_modules/axe-core/axe.min.js"
if [ -f "$FILE" ] && grep -q "\"version\": \"$VERSION\"" "$DIR/node_modules/axe-core/package.json"; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
mkdir -p "$DIR"
npm install --prefix "$DIR" --no-save --no-audit --no-fund --no-package-lock --silent "axe-core@$VERSION"
test -f "$FILE"
