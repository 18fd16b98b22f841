#!/usr/bin/env bash
# The Prometheus server the dashboard test evaluates every Grafana query with: Debian's
# `prometheus` package (its daemon is not started; the test runs its own on a temp dir).
# Idempotent: does nothing when /usr/bin/prometheus (or $EFFECTD_PROMETHEUS) is there.
set -euo pipefail
PROMETHEUS=${EFFECTD_PROMETHEUS:-/usr/bin/prometheus}
if [ -x "$PROMETHEUS" ]; then
  echo "[prometheus] $("$PROMETHEUS" --version 2>&1 | head -n1) at $PROMETHEUS"
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "[prometheus] $PROMETHEUS is missing; as root: apt-get install -y prometheus" >&2; exit 1; }
T0=$(date +%s)
echo "[prometheus] apt-get install -y prometheus"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends prometheus >/dev/null
[ -x "$PROMETHEUS" ] || { echo "[prometheus] still no $PROMETHEUS after apt-get install" >&2; exit 1; }
echo "[prometheus] installed $("$PROMETHEUS" --version 2>&1 | head -n1) in $(( $(date +%s) - T0 )) s"
