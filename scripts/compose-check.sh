#!/usr/bin/env bash
# Validates docker-compose.yml without a Docker engine: `docker-compose config -q` from PyPI's
# docker-compose 1.29.2 (the Python Compose v1, which parses, validates against its Compose
# schema, interpolates and checks references such as depends_on offline), in a virtualenv made
# once under ~/.cache/effectd and reused.
#
#   scripts/compose-check.sh [compose-file]     # default: docker-compose.yml of this checkout
#
# Exit: 0 valid; 1 invalid (Compose's own message on stderr); 3 the validator could not be installed
# (e.g. no route to PyPI): nothing was checked.
#
# Environment:
#   EFFECTD_COMPOSE_VENV   the virtualenv (default ~/.cache/effectd/docker-compose-1.29.2)
set -uo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FILE=${1:-$REPO_ROOT/docker-compose.yml}
VERSION=1.29.2
VENV=${EFFECTD_COMPOSE_VENV:-$HOME/.cache/effectd/docker-compose-$VERSION}
COMPOSE=$VENV/bin/docker-compose
READY=$VENV/.effectd-ready   # written last: a half-made venv is made again

log() { echo "[compose-check] $*" >&2; }

install_validator() {
  log "installing docker-compose $VERSION from PyPI into $VENV (once)"
  mkdir -p "$(dirname "$VENV")"
  rm -rf "$VENV"
  local pip="$VENV/bin/pip"
  local logfile="$(dirname "$VENV")/docker-compose-$VERSION.pip.log"
  # docker-compose 1.29.2 needs PyYAML < 6, whose 5.4.1 sdist no longer builds under Cython 3 and
  # a current setuptools: build it with the tools of its time, then install docker-compose itself.
  if python3 -m venv "$VENV" >"$logfile" 2>&1 &&
     "$pip" install -q --disable-pip-version-check "cython<3" wheel "setuptools<70" >>"$logfile" 2>&1 &&
     "$pip" install -q --disable-pip-version-check --no-build-isolation "pyyaml==5.4.1" >>"$logfile" 2>&1 &&
     "$pip" install -q --disable-pip-version-check "docker-compose==$VERSION" >>"$logfile" 2>&1 &&
     "$COMPOSE" version --short >>"$logfile" 2>&1; then
    touch "$READY"
    return 0
  fi
  tail -n 5 "$logfile" >&2
  rm -rf "$VENV"
  log "could not install docker-compose $VERSION (log: $logfile): nothing was checked"
  return 3
}

[ -f "$FILE" ] || { log "no such file: $FILE"; exit 1; }
if [ ! -f "$READY" ]; then
  install_validator || exit 3
fi

# --project-directory: relative paths (volumes, build contexts) resolve against the checkout.
# No profile is named: Compose v1 validates every service, those behind profiles included.
if "$COMPOSE" --project-directory "$(dirname "$FILE")" -f "$FILE" config -q; then
  echo "[compose-check] $FILE is a valid Compose file (docker-compose $VERSION: $("$COMPOSE" -f "$FILE" config --services | paste -sd " "))"
else
  log "$FILE is not a valid Compose file (see above)"
  exit 1
fi
