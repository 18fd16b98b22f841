#!/usr/bin/env bash
# A program some tests run from a Debian package, installed when missing:
#   ensure-debian-package.sh <package> <binary path> [apt-get install options…]
# chromium: the console's browser test (driven by playwright-core through executablePath, which
# never downloads a browser here); prometheus: the dashboard test evaluates every Grafana query
# with it (its daemon is not started; the test runs its own on a temp dir).
# Idempotent: does nothing when the binary is there ($EFFECTD_CHROMIUM / $EFFECTD_PROMETHEUS move it).
set -euo pipefail
PACKAGE=$1
BINARY=$2
shift 2
# chromium's wrapper script chatters on stderr; prometheus prints its version there.
# (A binary that prints nothing on either stream, such as ping for --version, is "version unknown".)
version() { local v; v=$("$BINARY" --version 2>/dev/null | head -n1); [ -n "$v" ] || v=$("$BINARY" --version 2>&1 | head -n1); echo "${v:-version unknown}"; }
if [ -x "$BINARY" ]; then
  echo "[$PACKAGE] $(version) at $BINARY"
  exit 0
fi
log() { echo "[$PACKAGE] $*"; }
die() { echo "[$PACKAGE] ERROR: $*" >&2; exit 1; }
# shellcheck source=lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
[ "$(id -u)" = 0 ] || die "$BINARY is missing; as root: apt-get install -y $PACKAGE"
T0=$(date +%s)
apt_install "$@" "$PACKAGE"
[ -x "$BINARY" ] || die "still no $BINARY after apt-get install"
echo "[$PACKAGE] installed $(version) in $(( $(date +%s) - T0 )) s"
