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
if [ -n "${HANGAR_AUTH_CONFIG:-}" ]; then
  set -- --auth-config "$HANGAR_AUTH_CONFIG" "$@"
fi
exec node /app/bin/hangar.js start --host "${HANGAR_HOST:-0.0.0.0}" --port "${HANGAR_PORT:-9997}" --home "${HANGAR_HOME:-/var/lib/hangar}" "$@"
