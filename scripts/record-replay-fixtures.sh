#!/usr/bin/env bash
# Records the replay fixtures of test/replay/ (see test/replay/README.md): a bounded set of the
# benchmark's fault cells, once per stored format, by the code of one commit (default HEAD: the
# fixture's header names it). The commit is exported (git archive: the working tree and git state
# are not touched) and built in a temporary directory; its `effectd bench` runs the cells, and
# test/replay/record.mjs writes each ledger's raw rows and tool policies to
# test/replay/fixtures/<format>-<suffix>.json. Then write the new fixture's expected decisions
# (REPLAY_UPDATE=1 writes only the decisions files that do not exist yet):
#   REPLAY_UPDATE=1 npx vitest run test/unit/replay-recorded.unit.spec.ts
#
# A fixture is a recording of what an older effectd wrote: never re-record one to make a failing
# replay pass. Record a NEW format (or a new event version) into a new file.
#
# Usage: scripts/record-replay-fixtures.sh [--commit REV] [--suffix v1] [--keep] FORMAT...
#   FORMAT: verbatim | compact | deflate | sqlite (PostgreSQL formats need `npm run services:up`)
# Environment: EFFECTD_REPLAY_PG (default postgres://effectd:effectd@127.0.0.1:5432/effectd)
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REV=HEAD
SUFFIX=v1
KEEP=()
FORMATS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --commit) REV=$2; shift 2 ;;
    --suffix) SUFFIX=$2; shift 2 ;;
    --keep) KEEP=(--keep); shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) FORMATS+=("$1"); shift ;;
  esac
done
[ ${#FORMATS[@]} -gt 0 ] || { echo "name the formats to record: verbatim compact deflate sqlite" >&2; exit 2; }
for format in "${FORMATS[@]}"; do
  if [ -e "$REPO_ROOT/test/replay/fixtures/$format-$SUFFIX.json" ]; then
    echo "test/replay/fixtures/$format-$SUFFIX.json exists: fixtures are never re-recorded (a new format or event version gets a new file, e.g. --suffix v2)" >&2
    exit 1
  fi
done

# The events' version the recorded build writes: the suffix names it (v1, v2…); any other suffix records version 1.
EVENT_VERSION=1
if [[ "$SUFFIX" =~ ^v([0-9]+)$ ]]; then EVENT_VERSION=${BASH_REMATCH[1]}; fi
COMMIT=$(git -C "$REPO_ROOT" rev-parse "$REV^{commit}")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/effectd-replay-record.XXXXXX")
[ ${#KEEP[@]} -gt 0 ] || trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/tree"
git -C "$REPO_ROOT" archive --format=tar "$COMMIT" | tar -x -C "$WORK/tree"
ln -s "$REPO_ROOT/node_modules" "$WORK/tree/node_modules"
echo "[record] building effectd $COMMIT in $WORK/tree"
(cd "$WORK/tree" && node node_modules/typescript/bin/tsc -p tsconfig.build.json)

for format in "${FORMATS[@]}"; do
  node "$REPO_ROOT/test/replay/record.mjs" --tree "$WORK/tree" --format "$format" --commit "$COMMIT" --event-version "$EVENT_VERSION" "${KEEP[@]}" \
    --out "$REPO_ROOT/test/replay/fixtures/$format-$SUFFIX.json" \
    --command "scripts/record-replay-fixtures.sh --commit $COMMIT --suffix $SUFFIX $format"
done
