#!/bin/sh
# The image's command: `hangar start` on HANGAR_HOST:HANGAR_PORT with the home folder
# HANGAR_HOME, plus `--auth-config $HANGAR_AUTH_CONFIG` when that is set. Arguments
# starting with `-` are added to `hangar start` (e.g. `--log-level debug`); any other
# first argument is run as a command instead (e.g. `bash`).
# `exec`, so the service itself receives tini's SIGTERM and drains.
set -eu
if [ "$#" -gt 0 ] && [ "${1#-}" = "$1" ]; then
  exec "$@"
fi
# The address comes from HANGAR_HOST and HANGAR_PORT only: the health check probes
# HANGAR_PORT, so a --port here would leave the container unhealthy.
for arg in "$@"; do
  case "$arg" in
    --port|--port=*|--host|--host=*)
      echo "hangar image: set the address with -e HANGAR_PORT=<port> / -e HANGAR_HOST=<address> (the health check reads them), not $arg" >&2
      exit 2 ;;
  esac
done
if [ -n "${HANGAR_AUTH_CONFIG:-}" ]; then
  set -- --auth-config "$HANGAR_AUTH_CONFIG" "$@"
fi
exec node /app/bin/hangar.js start --host "${HANGAR_HOST:-0.0.0.0}" --port "${HANGAR_PORT:-9997}" --home "${HANGAR_HOME:-/var/lib/hangar}" "$@"
