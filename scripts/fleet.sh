#!/usr/bin/env bash
# npm run fleet -- --seed N --minutes M   (root: network namespaces, a bridge, iptables inside them)
# The harness tears its fleet down itself; this trap does it once more whatever happened to it.
set -uo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "fleet: needs root (ip netns, bridges, iptables)" >&2; exit 2; }
command -v iptables >/dev/null || bash scripts/ensure-debian-package.sh iptables /usr/sbin/iptables
[ -f dist/src/cli/main.js ] && [ -f packages/simulators/dist/main.js ] || npm run build --silent
trap 'node test/fleet/fleet.mjs --cleanup >/dev/null 2>&1' EXIT
node test/fleet/fleet.mjs "$@"
