#!/usr/bin/env bash
# EFFECTD_FLEET_NET=<n> npm run fleet:scale -- [--quota 0.4] [--seconds 30] [--workers 48] [--steps 5]
# (root: network namespaces, a bridge, cgroups). The scale-out table of docs/benchmark.md.
# The harness tears its fleet and its cgroups down itself; this trap does it once more whatever happened to it.
set -uo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "fleet:scale: needs root (ip netns, bridges, cgroups)" >&2; exit 2; }
bash scripts/ensure-debian-package.sh haproxy /usr/sbin/haproxy >/dev/null
[ -f dist/src/cli/main.js ] && [ -f packages/simulators/dist/main.js ] || npm run build --silent
trap 'node test/fleet/scale-out.mjs --cleanup >/dev/null 2>&1' EXIT
node test/fleet/scale-out.mjs "$@"
