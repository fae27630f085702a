#!/usr/bin/env bash
# Builds Hangar's CPU image on a machine that has no Docker engine running and no image
# registry to pull from (CI here), and leaves the engine running for the container
# tests. Idempotent: run it again and it reuses the engine, the base image and the
# layer cache. Needs root (apt-get, dockerd) unless an engine already answers.
#
#   bash docker/ci-build.sh            # prints the image name on its last line
#
# Steps:
#  1. install docker.io, debootstrap and docker-compose from Debian when missing;
#  2. start dockerd unless `docker info` already works: no bridge network and no
#     iptables rules (containers run with --network host or none), its own data-root
#     and pidfile under $HANGAR_DOCKER_STATE, the default socket;
#  3. make the base image from Debian with debootstrap (skipped when it exists);
#  4. build docker/Dockerfile on it (with the host's llama-server when the host runs
#     the same Debian release) with the legacy builder and --network host, with
#     pip pointed at the machine's own package indexes (local folders are served on
#     loopback for the length of the build) and npm at the machine's npm registry;
#     skipped when the image there was built from the same inputs (a hash of the
#     build context and arguments, kept as the image's label org.hangar.inputs).
#
# Settings (environment): HANGAR_IMAGE (hangar:cpu), HANGAR_BASE_IMAGE
# (hangar-base:bookworm), HANGAR_DOCKER_STATE (/var/lib/hangar-docker),
# HANGAR_DEBIAN_MIRROR (from apt's sources), HANGAR_PIP_PORT (3141: a fixed port keeps
# the pip layer cacheable, since the index address is one of its build arguments).
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE="${HANGAR_IMAGE:-hangar:cpu}"
BASE_IMAGE="${HANGAR_BASE_IMAGE:-hangar-base:bookworm}"
STATE_DIR="${HANGAR_DOCKER_STATE:-/var/lib/hangar-docker}"
PIP_PORT="${HANGAR_PIP_PORT:-3141}"
SUITE=bookworm

log() { echo "docker/ci-build: $*" >&2; }
die() { log "$*"; exit 1; }
seconds() { echo $((SECONDS - $1))s; }

is_root() { [ "$(id -u)" = 0 ]; }

# --- 1. tools --------------------------------------------------------------------
# apt-get that waits for other apt users (a parallel set-up, an unattended upgrade):
# DPkg::Lock::Timeout covers dpkg's lock, but `apt-get update` fails at once on the
# lists lock, so retry that for up to five minutes.
apt_get() {
  local attempt err
  err=$(mktemp)
  for attempt in $(seq 1 60); do
    if apt-get -o DPkg::Lock::Timeout=300 "$@" 2>"$err"; then rm -f "$err"; return 0; fi
    grep -q 'Could not get lock' "$err" || break
    [ "$attempt" = 1 ] && log "apt is busy (another apt-get holds its lock); waiting"
    sleep 5
  done
  cat "$err" >&2
  rm -f "$err"
  return 1
}

install_tools() {
  local missing=()
  command -v docker >/dev/null || missing+=(docker.io)
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  command -v docker-compose >/dev/null || missing+=(docker-compose)
  [ "${#missing[@]}" -eq 0 ] && return
  is_root || die "missing ${missing[*]} and not root: install them (apt-get install docker.io debootstrap docker-compose) or run as root"
  local t=$SECONDS guard=""
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # docker.io's install script starts the engine with its defaults (a bridge network
  # with its own address range) unless a policy-rc.d forbids starting services: add
  # one for the length of the install where the machine has none.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    guard=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\n# added by docker/ci-build.sh while it installs packages\nexit 101\n' >"$guard"
    chmod +x "$guard"
  fi
  local rc=0
  { apt_get update -qq \
      && apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } || rc=$?
  if [ -n "$guard" ]; then rm -f "$guard"; fi
  [ "$rc" = 0 ] || die "apt-get failed (exit $rc)"
  log "installed in $(seconds $t)"
}

# --- 2. engine -------------------------------------------------------------------
# Whether pid is a live process (a zombie, a killed engine nobody has reaped yet,
# still answers kill -0).
alive() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true)
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# The pid in dockerd's pidfile when that process is a live dockerd; else empty.
running_dockerd() {
  local pidfile=$1 pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile" 2>/dev/null || true)
  [ -n "$pid" ] && alive "$pid" || return 0
  # A pidfile left by a killed engine may name a pid the system has since reused.
  [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = dockerd ] && echo "$pid"
  return 0
}

# Waits up to two minutes (an engine restoring a killed predecessor's state on a
# busy two-core machine takes a while) for the engine to answer; fails once the
# dockerd being waited for has exited.
await_engine() {
  local pid=$1 pidfile=$2 t=$3 other
  for _ in $(seq 1 240); do
    if docker info >/dev/null 2>&1; then
      log "engine ready in $(seconds "$t")"
      return 0
    fi
    if ! alive "$pid"; then
      # Where setsid had to fork, $! was setsid itself: follow the pidfile instead.
      other=$(running_dockerd "$pidfile")
      if [ -n "$other" ] && [ "$other" != "$pid" ]; then pid=$other; continue; fi
      log "dockerd $pid exited"
      return 1
    fi
    sleep 0.5
  done
  log "dockerd $pid did not answer in $(seconds "$t")"
  return 1
}

start_engine() {
  if docker info >/dev/null 2>&1; then
    log "using the running Docker engine"
    return
  fi
  is_root || die "no Docker engine answers and not root to start one"
  mkdir -p "$STATE_DIR"
  local pidfile="$STATE_DIR/dockerd.pid" logfile="$STATE_DIR/dockerd.log" pid t=$SECONDS
  pid=$(running_dockerd "$pidfile")
  if [ -n "$pid" ]; then
    log "dockerd $pid runs but does not answer yet; waiting for it"
    if await_engine "$pid" "$pidfile" "$t"; then return; fi
    # It went away (or hangs): ours replaces it.
    if alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; sleep 1; fi
  fi
  # A killed engine leaves its pidfile behind, and dockerd refuses to start while one
  # names a live process: remove it. Keep the previous log for a post-mortem, and
  # start a fresh one so that what is printed on failure is this engine's own.
  rm -f "$pidfile"
  if [ -f "$logfile" ]; then mv -f "$logfile" "$logfile.previous"; fi
  t=$SECONDS
  log "starting dockerd (data-root $STATE_DIR/data, log $logfile)"
  # setsid: the engine outlives this script (the tests use it) and its session.
  setsid dockerd \
    --data-root "$STATE_DIR/data" \
    --exec-root "$STATE_DIR/exec" \
    --pidfile "$pidfile" \
    --host unix:///var/run/docker.sock \
    --bridge=none --iptables=false --ip-masq=false \
    >"$logfile" 2>&1 </dev/null &
  pid=$!
  log "dockerd pid $pid, waiting for it to answer"
  if await_engine "$pid" "$pidfile" "$t"; then return; fi
  tail -n 40 "$logfile" >&2 || true
  die "the Docker engine did not come up (log above: $logfile)"
}

# --- 3. base image ---------------------------------------------------------------
debian_mirror() {
  if [ -n "${HANGAR_DEBIAN_MIRROR:-}" ]; then echo "$HANGAR_DEBIAN_MIRROR"; return; fi
  # The first Debian archive (not -security) apt itself uses.
  local uri
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' | grep -E '/debian/?$' | head -n1 || true)
  [ -n "$uri" ] || uri=$(grep -hE '^deb [^ ]+/debian/? ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | head -n1 || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

build_base_image() {
  if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    log "base image $BASE_IMAGE exists"
    return
  fi
  is_root || die "debootstrap needs root to make the base image $BASE_IMAGE"
  local t=$SECONDS mirror rootfs
  mirror=$(debian_mirror)
  rootfs=$(mktemp -d /var/tmp/hangar-rootfs.XXXXXX)
  log "debootstrap $SUITE from $mirror into $rootfs"
  if ! debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" >"$rootfs.log" 2>&1; then
    tail -n 30 "$rootfs.log" >&2
    rm -rf "$rootfs" "$rootfs.log"
    die "debootstrap failed"
  fi
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs" "$rootfs.log"
  log "base image $BASE_IMAGE made in $(seconds $t)"
}

# --- 4. the image ----------------------------------------------------------------
PIP_SERVER_PID=""
SERVE_DIR=""
cleanup() {
  if [ -n "$PIP_SERVER_PID" ]; then kill "$PIP_SERVER_PID" 2>/dev/null || true; fi
  if [ -n "$SERVE_DIR" ]; then rm -rf "$SERVE_DIR"; fi
}
trap cleanup EXIT

pip_config() {
  local python=python-runtime/.venv/bin/python
  [ -x "$python" ] || python=python3
  "$python" -m pip config get "global.$1" 2>/dev/null || true
}

# Local folder -> a path under $SERVE_DIR; prints the URL the build reaches it at.
serve_local() {
  local dir=$1 name=$2
  ln -s "$dir" "$SERVE_DIR/$name"
  echo "http://127.0.0.1:$PIP_PORT/$name"
}

# The first free port from PIP_PORT on: a server left behind by a killed earlier run
# may still hold the usual one (the pip layer is then rebuilt, since the index address
# is one of its build arguments).
pick_pip_port() {
  local port
  for port in $(seq "$PIP_PORT" $((PIP_PORT + 20))); do
    if python3 -c "import socket, sys; s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1])))" "$port" 2>/dev/null; then
      [ "$port" = "$PIP_PORT" ] || log "port $PIP_PORT is taken; serving the package indexes on $port"
      PIP_PORT=$port
      return
    fi
  done
  die "no free port in $PIP_PORT-$((PIP_PORT + 20)) to serve the package indexes on (set HANGAR_PIP_PORT)"
}

# Sets PY_INDEX, PY_EXTRA, PY_FIND_LINKS, PY_TRUSTED from pip's configuration: file://
# indexes and local find-links folders are served over loopback HTTP (the build runs
# with --network host), other URLs pass through unchanged.
python_sources() {
  PY_INDEX=""; PY_EXTRA=""; PY_FIND_LINKS=""; PY_TRUSTED=""
  pick_pip_port
  local index extra links n=0 url path served=0
  index=$(pip_config index-url)
  extra=$(pip_config extra-index-url)
  links=$(pip_config find-links)
  # As in scripts/setup.mjs: with only extra indexes configured, pip retries the
  # unreachable default index for every package; make the first extra the index.
  if [ -z "$index" ] && [ -n "$extra" ]; then
    index=${extra%% *}
    extra=${extra#"$index"}
  fi
  SERVE_DIR=$(mktemp -d /tmp/hangar-pip-serve.XXXXXX)
  for url in $index $extra; do
    n=$((n + 1))
    case "$url" in
      file://*)
        path=${url#file://}
        # An index's pages link to its files as ../../files/...: serve its parent.
        url="$(serve_local "$(dirname "$path")" "index$n")/$(basename "$path")/"
        served=1 ;;
    esac
    if [ -z "$PY_INDEX" ]; then PY_INDEX=$url; else PY_EXTRA="$PY_EXTRA $url"; fi
  done
  for path in $links; do
    n=$((n + 1))
    case "$path" in
      http://*|https://*) PY_FIND_LINKS="$PY_FIND_LINKS $path" ;;
      *)
        path=${path#file://}
        [ -d "$path" ] || continue
        PY_FIND_LINKS="$PY_FIND_LINKS $(serve_local "$path" "links$n")/"
        served=1 ;;
    esac
  done
  if [ "$served" = 1 ]; then
    PY_TRUSTED="127.0.0.1"
    python3 -m http.server "$PIP_PORT" --bind 127.0.0.1 --directory "$SERVE_DIR" >/dev/null 2>&1 &
    PIP_SERVER_PID=$!
    for _ in $(seq 1 50); do
      if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PIP_PORT/', timeout=1)" 2>/dev/null; then break; fi
      kill -0 "$PIP_SERVER_PID" 2>/dev/null || die "could not serve the local package indexes on 127.0.0.1:$PIP_PORT (port taken? set HANGAR_PIP_PORT)"
      sleep 0.2
    done
    log "serving the local package indexes on 127.0.0.1:$PIP_PORT for the build"
  fi
}

# The build's downloads (Node, npm packages) trust what this machine trusts: on a
# network that inspects TLS, its CA is in the machine's bundle and nowhere else.
build_ca() {
  local bundle="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
  rm -f docker/build-ca/*.crt
  if [ -f "$bundle" ]; then cp "$bundle" docker/build-ca/host.crt; fi
}

# A hash of everything the build reads: the files of the build context (the repository
# as .dockerignore filters it: the forms of pattern that file uses, a path or `**/name`,
# a match taking the whole folder), their executable bits, the base image's id, and the
# build arguments given as this function's arguments.
inputs_hash() {
  local base_id
  base_id=$(docker image inspect -f '{{.Id}}' "$BASE_IMAGE")
  python3 - "$base_id" "$@" <<'PY'
import fnmatch, hashlib, os, sys
patterns = [line.strip().rstrip("/") for line in open(".dockerignore")
            if line.strip() and not line.lstrip().startswith("#")]
def ignored(rel):
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        for p in patterns:
            if p.startswith("**/") and fnmatch.fnmatchcase(parts[i - 1], p[3:]):
                return True
            if not p.startswith("**/") and fnmatch.fnmatchcase(prefix, p):
                return True
    return False
digest = hashlib.sha256("\0".join(sys.argv[1:]).encode())
for folder, dirs, files in os.walk("."):
    dirs[:] = sorted(d for d in dirs if not ignored(os.path.relpath(os.path.join(folder, d))))
    for name in sorted(files):
        rel = os.path.relpath(os.path.join(folder, name))
        if ignored(rel) or os.path.islink(rel):
            continue
        digest.update(f"\0{rel}\0{os.access(rel, os.X_OK)}\0".encode())
        with open(rel, "rb") as f:
            digest.update(f.read())
print(digest.hexdigest())
PY
}

# The llama-server the host's set-up built (scripts/build-llama-server.mjs), put where
# docker/Dockerfile looks for one (docker/.llama-server), when the host runs the base
# image's Debian release: the same compiler and libraries would build the same binary,
# so the image build skips those minutes of compiling. Elsewhere the image builds its own.
llama_server_from_host() {
  rm -rf docker/.llama-server
  [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" = "$SUITE" ] || return 0
  local built
  built=$(node scripts/build-llama-server.mjs --print-path 2>/dev/null) || return 0
  [ -x "$built" ] || return 0
  mkdir -p docker/.llama-server
  cp -a "$(dirname "$built")" docker/.llama-server/
  log "the image takes the host's llama-server ($(basename "$(dirname "$built")"))"
}

build_image() {
  local t=$SECONDS registry inputs built
  python_sources
  build_ca
  llama_server_from_host
  registry=$(npm config get registry 2>/dev/null || true)
  local args=(
    --build-arg "BASE_IMAGE=$BASE_IMAGE"
    --build-arg "NPM_REGISTRY=${registry:-https://registry.npmjs.org}"
    --build-arg "PYTHON_INDEX_URL=$PY_INDEX"
    --build-arg "PYTHON_EXTRA_INDEX_URLS=${PY_EXTRA# }"
    --build-arg "PYTHON_FIND_LINKS=${PY_FIND_LINKS# }"
    --build-arg "PYTHON_TRUSTED_HOST=$PY_TRUSTED"
  )
  # The image made from these very inputs on this machine before is the image: reuse it.
  inputs=$(inputs_hash "${args[@]}")
  built=$(docker image inspect -f '{{index .Config.Labels "org.hangar.inputs"}}' "$IMAGE" 2>/dev/null || true)
  if [ "$built" = "$inputs" ]; then
    log "image $IMAGE is up to date (its inputs hash to ${inputs:0:12} as at its build); not rebuilt"
    return
  fi
  log "building $IMAGE on $BASE_IMAGE (inputs ${inputs:0:12})"
  # The image this build replaces (2 GB), removed once the new one is tagged: before, every
  # rebuild left the old one behind, untagged, and a contributor's disk filled up.
  local previous
  previous=$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
  # The legacy builder: no BuildKit daemon or frontend image to pull. --network host:
  # the build's RUN steps reach the package sources exactly as this machine does. The
  # layers are ordered so a change to the control plane alone rebuilds only the `app`
  # stage (docker/Dockerfile); the Python environment's layers are reused.
  DOCKER_BUILDKIT=0 docker build \
    --network host \
    -f docker/Dockerfile \
    -t "$IMAGE" \
    --label "org.hangar.inputs=$inputs" \
    "${args[@]}" \
    . >&2
  if [ -n "$previous" ] && [ "$previous" != "$(docker image inspect -f '{{.Id}}' "$IMAGE")" ]; then
    # Only if nothing uses it (a running container keeps it, and that is fine).
    docker image rm "$previous" >/dev/null 2>&1 || true
  fi
  log "image $IMAGE built in $(seconds $t)"
}

main() {
  local t0=$SECONDS
  install_tools
  start_engine
  build_base_image
  build_image
  log "done in $(seconds "$t0")"
  echo "$IMAGE"
}

# One line, so bash has read the whole file before anything runs (an edit to the file
# during a build cannot change what runs).
main "$@"; exit $?
