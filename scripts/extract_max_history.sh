#!/usr/bin/env bash
# Extract MAX's flag catalogs for past releases with each release's own click commands
# (scripts/extract_max_flags.py --all), into src/servekit/engines/max/data/max-<V>[-<cmd>].json.gz.
#   scripts/extract_max_history.sh [VERSION...]   (default: the releases listed below)
# Each release's Python package and native runtime (max==V, max-core==V and the exact pins of
# max-core's metadata: mojo-compiler and its mojo-compiler-mojo-libs, max-mojo-libs,
# max-shmem-libs) are installed with
# --no-deps in one pip call into $SERVEKIT_CACHE/max/V (default /work/cache/servekit, outside the
# repository), the release's `serve` extra that environment lacks into $CACHE/max/V-extra, both
# put ahead of the max-26.7.0 engine environment (servekit engine install
# max==26.7.0), whose other packages (click, msgspec, numpy ...) they use.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
CACHE="${SERVEKIT_CACHE:-/work/cache/servekit}/max"
ENGINES="${SERVEKIT_ENGINES_DIR:-$REPO/.servekit-ci/engines}"
PYTHON="$ENGINES/max-26.7.0/venv/bin/python"
OUT="${OUT_DIR:-$REPO/src/servekit/engines/max/data}"
RELEASES="25.3.0 25.4.0 25.5.0 25.6.1 25.7.0 26.1.0 26.2.0 26.3.0 26.4.0 26.5.0 26.6.0"
[ -x "$PYTHON" ] || { echo "no $PYTHON: run servekit engine install max==26.7.0" >&2; exit 1; }

runtime() {  # VERSION: the release's packages in one --target folder
  local v=$1 target="$CACHE/$1" pins extra
  [ -f "$target/done" ] && return 0
  rm -rf "$target" "$target-extra" "$CACHE/meta-$v" && mkdir -p "$CACHE/meta-$v"
  pip download -q --no-deps "max-core==$v" -d "$CACHE/meta-$v"
  pins=$(python3 - "$CACHE/meta-$v" <<'PY'
import sys, zipfile, pathlib
wheel = next(pathlib.Path(sys.argv[1]).glob("max_core-*.whl"))
meta = next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA"))
lines = zipfile.ZipFile(wheel).read(meta).decode().splitlines()
pins = [l.split(":", 1)[1].replace(" ", "") for l in lines
        if l.startswith("Requires-Dist:") and "==" in l and "extra" not in l]
# mojo-compiler pins its standard library package at its own version
pins += [p.replace("mojo-compiler==", "mojo-compiler-mojo-libs==") for p in pins if p.startswith("mojo-compiler==")]
print(" ".join(pins))
PY
)
  # shellcheck disable=SC2086  # the pins split into words on purpose
  pip install -q --no-deps --target "$target" "max==$v" "max-core==$v" $pins
  # the release's `serve` extra that the max-26.7.0 environment lacks (26.6 and older: llguidance)
  extra=$("$PYTHON" - "$target" <<'PY'
import importlib.metadata as md, pathlib, sys
from packaging.requirements import Requirement
meta = next(pathlib.Path(sys.argv[1]).glob("max-*.dist-info")) / "METADATA"
wanted = [Requirement(l.split(":", 1)[1]) for l in meta.read_text().splitlines() if l.startswith("Requires-Dist:")]
def missing(req):
    try:
        md.version(req.name)
    except md.PackageNotFoundError:
        return True
    return False
print(" ".join(str(r).split(";")[0].replace(" ", "") for r in wanted
               if r.marker is not None and r.marker.evaluate({"extra": "serve"})
               and not r.marker.evaluate({"extra": ""}) and missing(r)))
PY
)
  if [ -n "$extra" ]; then
    # shellcheck disable=SC2086
    pip install -q --no-deps --target "$target-extra" $extra
  fi
  touch "$target/done"
}

extract() {  # VERSION
  local v=$1 tmp
  runtime "$v" || { echo "max $v: not installable" >&2; return 1; }
  tmp=$(mktemp -d)
  if ! PYTHONPATH="$CACHE/$v:$CACHE/$v-extra" "$PYTHON" scripts/extract_max_flags.py --all "$tmp"; then
    echo "max $v: its commands did not load" >&2
    rm -rf "$tmp"
    return 1
  fi
  for f in "$tmp"/*.json; do
    # shellcheck disable=SC2094  # reads $f, writes another file
    gzip -n -9 < "$f" > "$OUT/$(basename "$f").gz.tmp" && mv "$OUT/$(basename "$f").gz.tmp" "$OUT/$(basename "$f").gz"
  done
  rm -rf "$tmp"
  echo "max $v: stored"
}

# shellcheck disable=SC2086  # the release list splits into words on purpose
[ $# -gt 0 ] || set -- $RELEASES
failed=()
for v in "$@"; do extract "$v" || failed+=("$v"); done
[ "${#failed[@]}" -eq 0 ] || { echo "not extracted: ${failed[*]}" >&2; exit 1; }
