#!/usr/bin/env bash
# Extract SGLang's flag catalogs for past releases with each release's own parser
# (scripts/extract_sglang_flags.py), into src/servekit/engines/sglang/data/sglang-<V>.json.gz.
#   scripts/extract_sglang_history.sh [VERSION...]     (default: the releases listed below)
# Each release's wheel (pip download --no-deps) is unpacked under $SERVEKIT_CACHE (default
# /work/cache/servekit, outside the repository) and placed ahead of the sglang-history parser
# environment (scripts/install_parser_envs.sh) on PYTHONPATH. What each needs beyond that
# environment (found release by release; scripts/extract_sglang_flags.py says why):
#   0.4.0-0.4.8:   --shadow triton==3.1.0,decord==0.6.0 (older triton names, decord)
#   0.4.3, 0.5.11-0.5.18: the transformers its wheel pins (with a tokenizers and huggingface-hub
#                  of its line), tried where the environment's transformers does not build it
#   every release: --stub torchvision==0.28.0 (its PyPI wheels need CUDA torch)
# Releases: the last patch of each 0.4.x and 0.5.x line on PyPI (`pip index versions sglang`),
# plus 0.4.0; 0.5.23 itself comes from its own environment (sglang-0.5.23).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
CACHE="${SERVEKIT_CACHE:-/work/cache/servekit}/sglang"
PARSERS="${SERVEKIT_PARSERS_DIR:-$REPO/.servekit-ci/parsers}"
PYTHON="$PARSERS/sglang-history/bin/python"
OUT="${OUT_DIR:-$REPO/src/servekit/engines/sglang/data}"
RELEASES="0.4.0 0.4.0.post2 0.4.1.post7 0.4.2.post4 0.4.3.post4 0.4.4.post4 0.4.5.post3 0.4.6.post5
0.4.7.post1 0.4.8.post1 0.4.9.post6 0.4.10.post2 0.5.1.post3 0.5.2 0.5.3.post3 0.5.4.post3 0.5.5.post3
0.5.6.post2 0.5.7 0.5.8.post1 0.5.9 0.5.10.post1 0.5.11 0.5.12.post1 0.5.13.post1 0.5.14 0.5.15.post1
0.5.16 0.5.17 0.5.18 0.5.19 0.5.20 0.5.21 0.5.22"
[ -x "$PYTHON" ] || { echo "no $PYTHON: run scripts/install_parser_envs.sh" >&2; exit 1; }
mkdir -p "$CACHE/wheels"

pinned_transformers() {  # SRC: the folder holding the transformers the release's wheel pins
  local pin deps target
  pin=$(sed -n 's/^Requires-Dist: transformers==\([0-9.]*\).*$/\1/p' "$1"/sglang-*.dist-info/METADATA | head -1)
  [ -n "$pin" ] || return 1
  case $pin in 4.*) deps="tokenizers>=0.21,<0.22 huggingface-hub>=0.24,<1.0" ;;
               *)   deps="tokenizers==0.22.2 huggingface-hub>=1.5,<2" ;; esac
  target="$CACHE/transformers-$pin"
  if [ ! -f "$target/done" ]; then
    # shellcheck disable=SC2086  # the two requirements split into words on purpose
    pip install -q --no-deps --target "$target" "transformers==$pin" $deps >&2 && touch "$target/done"
  fi
  echo "$target"
}

run_parser() {  # PYTHONPATH SHADOW: the catalog on stdout
  # shellcheck disable=SC2086  # $2 is one option and its value, or nothing
  PYTHONPATH="$1" "$PYTHON" scripts/extract_sglang_flags.py --stub torchvision==0.28.0 $2
}

extract() {  # VERSION
  local v=$1 src="$CACHE/src/$1" shadow="" pinned
  if [ ! -d "$src/sglang" ]; then
    pip download -q --no-deps "sglang==$v" -d "$CACHE/wheels"
    mkdir -p "$src" && python3 -m zipfile -e "$CACHE"/wheels/sglang-"$v"-*.whl "$src"
  fi
  case $v in 0.4.[0-8]|0.4.[0-8].*) shadow="--shadow triton==3.1.0,decord==0.6.0" ;; esac
  # the environment's transformers first; where the parser does not build with it, the pinned one
  if ! run_parser "$src" "$shadow" > "$CACHE/sglang-$v.json" 2> "$CACHE/sglang-$v.err"; then
    if ! pinned=$(pinned_transformers "$src") \
        || ! run_parser "$src:$pinned" "$shadow" > "$CACHE/sglang-$v.json" 2> "$CACHE/sglang-$v.err"; then
      tail -3 "$CACHE/sglang-$v.err" >&2
      echo "sglang $v: its parser did not build" >&2
      return 1
    fi
  fi
  gzip -n -9 < "$CACHE/sglang-$v.json" > "$OUT/sglang-$v.json.gz.tmp"
  mv "$OUT/sglang-$v.json.gz.tmp" "$OUT/sglang-$v.json.gz"
  echo "sglang $v: $OUT/sglang-$v.json.gz"
}

# shellcheck disable=SC2086  # the release list splits into words on purpose
[ $# -gt 0 ] || set -- $RELEASES
failed=()
for v in "$@"; do extract "$v" || failed+=("$v"); done
[ "${#failed[@]}" -eq 0 ] || { echo "not extracted: ${failed[*]}" >&2; exit 1; }
