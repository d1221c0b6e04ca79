#!/usr/bin/env bash
# The Docker engine the container tests run against (tests/launch/test_docker_engine.py) and a
# base image built without any registry. Idempotent; for Debian machines without systemd:
#   1. Debian's docker.io (dockerd, containerd, runc, docker-init) and debootstrap, with apt,
#      when missing. The docker CLI first on PATH may be another build than Debian's (a static
#      /usr/local/bin/docker); `docker version` must then reach the daemon (the CLI negotiates
#      the daemon's API version), else this fails and says which CLI and daemon disagree.
#   2. dockerd in the background when no daemon answers `docker info`, logging to
#      $STATE/dockerd.log; its pid goes to $STATE/dockerd.pid only then, so
#      `scripts/install_docker.sh stop` stops a daemon this script started and nothing else.
#   3. the base image servekit-ci/debian:bookworm, once: `debootstrap --variant=minbase` of
#      Debian bookworm from the mirror apt uses (/etc/apt/sources.list*), then `docker import`
#      (about 1.5 min; it runs while docker.io installs on a fresh machine). Beside minbase it
#      holds the shared libraries a Python engine environment of this machine loads: libssl3
#      (Python's ssl and hashlib), libnuma1 (vLLM's CPU kernels; the vLLM CPU image installs
#      libnuma too, docker/Dockerfile.cpu in github.com/vllm-project/vllm), libgomp1, libsqlite3-0.
# Usage: scripts/install_docker.sh        set up (1-3)
#        scripts/install_docker.sh stop   stop the dockerd that step 2 started, if any
set -euo pipefail
cd "$(dirname "$0")/.."
STATE="${SERVEKIT_DOCKER_STATE:-$PWD/.servekit-ci/docker}"
RELEASE=bookworm
BASE_IMAGE="servekit-ci/debian:$RELEASE"
LIBRARIES=libssl3,libnuma1,libgomp1,libsqlite3-0
ROOTFS="$STATE/rootfs"
mkdir -p "$STATE"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

stop_daemon() {
  [ -f "$STATE/dockerd.pid" ] || return 0
  local pid
  pid=$(cat "$STATE/dockerd.pid")
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "dockerd" ]; then
    $SUDO kill -TERM "$pid"
    for _ in $(seq 1 60); do
      [ -d "/proc/$pid" ] || break
      sleep 0.5
    done
    if [ -d "/proc/$pid" ]; then
      echo "dockerd ($pid) did not stop within 30 s; its log: $STATE/dockerd.log" >&2
      return 1
    fi
  fi
  rm -f "$STATE/dockerd.pid"
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
  $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "$@" >/dev/null
}

debian_mirror() {
  # The archive URI of the first apt source that serves $RELEASE (else the first Debian source
  # that is not the security archive): deb822 paragraphs (*.sources) and one-line entries (*.list).
  local files=()
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
  done
  [ "${#files[@]}" -gt 0 ] || { echo "no apt sources under /etc/apt" >&2; return 1; }
  awk -v release="$RELEASE" '
    function trim(text) { sub(/^[ \t]+/, "", text); sub(/[ \t]+$/, "", text); return text }
    function consider(uri, suites,    n, i, words) {
      if (uri == "" || uri ~ /security/) return
      if (fallback == "") fallback = uri
      n = split(suites, words, /[ \t]+/)
      for (i = 1; i <= n; i++) if (words[i] == release && chosen == "") chosen = uri
    }
    function paragraph() {
      if (types ~ /(^|[ \t])deb([ \t]|$)/) { split(uris, u, /[ \t]+/); consider(u[1], suites) }
      types = uris = suites = ""
    }
    FNR == 1 { paragraph() }
    FILENAME ~ /\.sources$/ {
      if ($0 ~ /^[ \t]*$/) paragraph()
      else if ($1 == "Types:") types = trim(substr($0, index($0, ":") + 1))
      else if ($1 == "URIs:") uris = trim(substr($0, index($0, ":") + 1))
      else if ($1 == "Suites:") suites = trim(substr($0, index($0, ":") + 1))
      next
    }
    $1 == "deb" { line = $0; sub(/\[[^]]*\]/, "", line); split(trim(line), w, /[ \t]+/); consider(w[2], w[3]) }
    END { paragraph(); print (chosen != "" ? chosen : fallback) }
' "${files[@]}"
}

bootstrap_rootfs() {
  local mirror
  mirror=$(debian_mirror)
  if [ -z "$mirror" ]; then
    echo "no Debian mirror found in the apt sources" >&2
    return 1
  fi
  $SUDO rm -rf "$ROOTFS"
  echo "debootstrap --variant=minbase --include=$LIBRARIES $RELEASE from $mirror" > "$STATE/debootstrap.log"
  if ! $SUDO debootstrap --variant=minbase --include="$LIBRARIES" "$RELEASE" "$ROOTFS" "$mirror" \
      >>"$STATE/debootstrap.log" 2>&1; then
    echo "debootstrap failed; the end of $STATE/debootstrap.log:" >&2
    tail -20 "$STATE/debootstrap.log" >&2
    return 1
  fi
}

start_daemon() {
  docker info >/dev/null 2>&1 && return 0
  stop_daemon
  $SUDO setsid dockerd >"$STATE/dockerd.log" 2>&1 </dev/null &
  echo "$!" >"$STATE/dockerd.pid"
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "dockerd did not answer within 30 s; the end of $STATE/dockerd.log:" >&2
  tail -20 "$STATE/dockerd.log" >&2
  return 1
}

check_cli() {
  local versions
  if ! versions=$(docker version --format '{{.Client.Version}} (API {{.Client.APIVersion}}) -> dockerd {{.Server.Version}} (API {{.Server.APIVersion}})' 2>&1); then
    echo "the docker CLI $(command -v docker) and the daemon disagree: $versions" >&2
    echo "fix: put Debian's /usr/bin/docker first on PATH, or a CLI that speaks the daemon's API" >&2
    return 1
  fi
  echo "docker CLI $(command -v docker) $versions"
}

if [ "${1:-}" = "stop" ]; then
  stop_daemon
  exit 0
fi

command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
bootstrap_pid=""
if ! command -v dockerd >/dev/null 2>&1; then
  # a fresh machine: the base image's root file system is fetched while docker.io installs
  bootstrap_rootfs &
  bootstrap_pid=$!
  apt_install docker.io
fi
start_daemon
check_cli
if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  [ -z "$bootstrap_pid" ] || wait "$bootstrap_pid" || true
else
  if [ -n "$bootstrap_pid" ]; then
    wait "$bootstrap_pid"
  else
    bootstrap_rootfs
  fi
  $SUDO tar -C "$ROOTFS" -c . | docker import \
    --message "debootstrap --variant=minbase --include=$LIBRARIES $RELEASE ($(debian_mirror))" - "$BASE_IMAGE" >/dev/null
  echo "built $BASE_IMAGE"
fi
$SUDO rm -rf "$ROOTFS"
