#!/usr/bin/env bash
# Headless Chromium for the console's browser test: Debian's `chromium` package, driven by
# playwright-core through executablePath (playwright never downloads a browser here).
# Idempotent: does nothing when /usr/bin/chromium (or $EFFECTD_CHROMIUM) is there.
set -euo pipefail
CHROMIUM=${EFFECTD_CHROMIUM:-/usr/bin/chromium}
if [ -x "$CHROMIUM" ]; then
  echo "[chromium] $("$CHROMIUM" --version 2>/dev/null | head -n1) at $CHROMIUM"
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "[chromium] $CHROMIUM is missing; as root: apt-get install -y chromium" >&2; exit 1; }
T0=$(date +%s)
echo "[chromium] apt-get install -y chromium"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
[ -x "$CHROMIUM" ] || { echo "[chromium] still no $CHROMIUM after apt-get install" >&2; exit 1; }
echo "[chromium] installed $("$CHROMIUM" --version 2>/dev/null | head -n1) in $(( $(date +%s) - T0 )) s"
