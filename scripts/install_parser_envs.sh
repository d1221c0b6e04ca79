#!/usr/bin/env bash
# Minimal parser environments for engine releases that cannot be installed whole here: the
# engine's wheel with --no-deps, the CPU torch 2.13.0, and only the packages its argument
# modules import. They build the engine's real argument parser (nothing more: no server starts
# from them) for the extraction scripts and the engine-marked agreement tests.
#   vllm 0.33.0:   its GPU build pins torch 2.14.0; the parser builds with VLLM_TARGET_DEVICE=cpu.
#   sglang 0.5.23: pins torch 2.14.1 and CUDA packages; ServerArgs.add_cli_args builds here.
#   sglang-history: the sglang-0.5.23 environment (a .pth line names its site-packages) plus the
#                  packages older server_args modules import; scripts/extract_sglang_history.sh
#                  puts a past release's wheel ahead of it on PYTHONPATH. No torch of its own
#                  (seconds to build once sglang-0.5.23 exists).
# Each lives under $SERVEKIT_PARSERS_DIR (default: .servekit-ci/parsers) and is reused while its
# stamp matches the package list below and the parser still imports; a rerun takes seconds.
set -uo pipefail
cd "$(dirname "$0")/.."
PARSERS="${SERVEKIT_PARSERS_DIR:-$PWD/.servekit-ci/parsers}"
PYTHON="${PYTHON:-python3.11}"

VLLM_033_IMPORTS="aiohttp cachetools cbor2 cloudpickle einops fastapi llguidance msgspec numpy openai ijson mistral_common
openai-harmony packaging partial-json-parser pillow prometheus-client psutil py-cpuinfo pybase64 pydantic
pyzmq regex requests transformers>=5.16.1,<5.21.0 urllib3 uvicorn uvloop watchfiles orjson xgrammar==0.2.8"
SGLANG_0523_IMPORTS="aiohttp ipython msgspec numpy orjson packaging pillow psutil pybase64 pydantic pyzmq
requests starlette tqdm triton"

parser_env() {  # NAME ENGINE_REQUIREMENT CHECK_MODULE PACKAGES...
  local name=$1 engine=$2 check=$3; shift 3
  local root="$PARSERS/$name" stamp
  stamp="$engine torch==2.13.0 $*"
  if [ -f "$root/stamp" ] && [ "$(cat "$root/stamp")" = "$stamp" ] \
      && VLLM_TARGET_DEVICE=cpu "$root/bin/python" -c "import $check" >/dev/null 2>&1; then
    echo "$name: reused ($root)"
    return 0
  fi
  echo "$name: building $root (torch 2.13.0 CPU, $engine --no-deps, $# import packages)"
  rm -rf "$root" && "$PYTHON" -m venv "$root" || return 1
  "$root/bin/pip" install -q torch==2.13.0 || return 1
  "$root/bin/pip" install -q "$@" || return 1
  "$root/bin/pip" install -q --no-deps "$engine" || return 1
  VLLM_TARGET_DEVICE=cpu "$root/bin/python" -c "import $check" || return 1
  echo "$stamp" > "$root/stamp"
}

# the packages older server_args modules import, with their own dependencies, pinned (--no-deps)
SGLANG_HISTORY_IMPORTS="annotated-doc==0.0.7 apache-tvm-ffi==0.1.15.post2 click==8.5.1 dill==0.4.1
fastapi==0.165.0 h11==0.16.0 hf-xet==1.8.0 httpcore==1.0.9 httpcore2==2.16.2 httpx==0.28.1 httpx2==2.16.2
huggingface_hub==2.4.0 jiter==0.19.0 markdown-it-py==4.3.0 mdurl==0.1.2 openai==3.57.0
opentelemetry-api==1.45.2 partial-json-parser==0.2.1.1.post7 PyYAML==6.0.4 regex==2026.11.19 rich==15.0.0
safetensors==0.8.0 sentencepiece==0.2.3 setproctitle==1.3.8 shellingham==1.5.4 sniffio==1.3.1
tokenizers==0.23.3 transformers==5.24.0 truststore==0.10.5 typer==0.29.2 uvicorn==0.54.0 uvloop==0.23.0
xgrammar==0.2.9"

overlay_env() {  # NAME BASE PACKAGES...: a venv that sees BASE's packages under its own
  local name=$1 base=$2; shift 2
  local root="$PARSERS/$name" stamp site
  stamp="overlay $base $*"
  if [ -f "$root/stamp" ] && [ "$(cat "$root/stamp")" = "$stamp" ] && [ -f "$PARSERS/$base/stamp" ]; then
    echo "$name: reused ($root)"
    return 0
  fi
  echo "$name: building $root (over $base, $# packages)"
  rm -rf "$root" && "$PYTHON" -m venv "$root" || return 1
  site=$("$PARSERS/$base/bin/python" -c "import site; print(site.getsitepackages()[0])") || return 1
  echo "$site" > "$("$root/bin/python" -c "import site; print(site.getsitepackages()[0])")/zz_$base.pth"
  "$root/bin/pip" install -q --no-deps "$@" || return 1
  echo "$stamp" > "$root/stamp"
}

failed=()
# shellcheck disable=SC2086  # the package lists split into words on purpose
parser_env vllm-0.33.0 vllm==0.33.0 vllm.entrypoints.common.cli_args $VLLM_033_IMPORTS || failed+=(vllm-0.33.0)
# shellcheck disable=SC2086
parser_env sglang-0.5.23 sglang==0.5.23 sglang.srt.server_args $SGLANG_0523_IMPORTS || failed+=(sglang-0.5.23)
# shellcheck disable=SC2086
overlay_env sglang-history sglang-0.5.23 $SGLANG_HISTORY_IMPORTS || failed+=(sglang-history)
if [ "${#failed[@]}" -gt 0 ]; then
  echo "could not build parser environments: ${failed[*]}" >&2
  exit 1
fi
