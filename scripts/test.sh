#!/usr/bin/env bash
# The test command. With no tier: everything `npm test` checks — brings up what the tests need
# (PostgreSQL, the Kafka broker, Chromium, Prometheus), type-checks (strict) and builds, checks
# docker-compose.yml, runs every tier — and ends with the line `tests: N passed, N failed[, N skipped]`.
#
#   scripts/test.sh [tier...] [vitest args...]
#
# Tiers (vitest projects in vitest.config.ts; `npm run test:<tier>` runs one):
#   unit      test/unit: pure modules, the lint, golden streams, the replay of recorded ledgers   no services
#   app       test/app: the application in-process on an in-memory ledger                         no services
#   contract  test/contract: the ledger contract (SQLite, PostgreSQL)                              PostgreSQL
#   int       test/int: int-local and int-services in parallel, int-serial one at a time          PostgreSQL, Kafka, dist/
#   e2e       test/e2e: the console in Chromium                                                    Chromium
# A tier run alone skips the type-check; everything else it needs is done as for the full run.
# Arguments after the tiers go to vitest (e.g. `scripts/test.sh int test/int/saga.int.spec.ts`).
#
# Environment: EFFECTD_TEST_WORKERS (vitest workers, default 3), EFFECTD_CI_START (set by .ci/run: the
# wall time is printed before the closing line).
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p test-artifacts

TIERS=()
while [ $# -gt 0 ]; do
  case "$1" in
    unit|app|contract|int|e2e) TIERS+=("$1"); shift ;;
    all) TIERS+=(unit app contract int e2e); shift ;;
    *) break ;;
  esac
done
FULL=0
[ ${#TIERS[@]} -eq 0 ] && { FULL=1; TIERS=(unit app contract int e2e); }
has() { local t; for t in "${TIERS[@]}"; do [ "$t" = "$1" ] && return 0; done; return 1; }

PHASES=()
phase_start=$(date +%s)
phase() { local now; now=$(date +%s); PHASES+=("$1 $((now - phase_start)) s"); phase_start=$now; }
# The closing line (and, under .ci/run, the wall time just before it).
finish() {
  if [ -n "${EFFECTD_CI_START:-}" ]; then
    local parts; parts=$(IFS=,; echo "${EFFECTD_CI_PHASES:+$EFFECTD_CI_PHASES,}${PHASES[*]}" | sed 's/,/, /g')
    echo "[ci] wall time: $(( $(date +%s) - EFFECTD_CI_START )) s (${parts})"
  fi
  if [ "$1" = fail ]; then echo "tests: 0 passed, 1 failed"; exit 1; fi
}

if [ ! -d node_modules ]; then
  echo "[test] installing dependencies (npm ci)"
  npm ci --no-audit --no-fund || finish fail
  phase "npm ci"
fi

services=
if has int; then services=pg,kafka; elif has contract; then services=pg; fi
if [ -n "$services" ]; then
  echo "[test] starting services ($services)"
  EFFECTD_SERVICES=$services npm run --silent services:up || { echo "[test] services:up failed"; finish fail; }
fi
if has e2e || has int; then
  bash scripts/ensure-debian-package.sh chromium "${EFFECTD_CHROMIUM:-/usr/bin/chromium}" || { echo "[test] chromium (for the console's browser test) could not be installed"; finish fail; }
fi
if has int; then
  bash scripts/ensure-debian-package.sh prometheus "${EFFECTD_PROMETHEUS:-/usr/bin/prometheus}" --no-install-recommends || { echo "[test] prometheus (for the dashboard's queries) could not be installed"; finish fail; }
fi
phase services

# The strict type-check (full run), the build (what spawns dist/: int, e2e) and the docker-compose.yml
# check (int) are independent: they run side by side, each on its own core.
pids=()
if [ $FULL = 1 ]; then npx tsc --noEmit > test-artifacts/tsc-noemit.log 2>&1 & pids+=("$!:tsc-noemit"); fi
# `npm run build`: whatever the package's build is (tsc -p tsconfig.build.json, and the workspaces it builds).
if has int || has e2e; then npm run --silent build > test-artifacts/tsc-build.log 2>&1 & pids+=("$!:tsc-build"); fi
if has int; then
  # docker-compose.yml is checked without a Docker engine (test/int/compose.int.spec.ts checks it against
  # the scripts too); exit 3 means the validator could not be installed, and that test says so.
  bash scripts/compose-check.sh > test-artifacts/compose-check.log 2>&1 & pids+=("$!:compose-check")
fi
failed=()
for entry in "${pids[@]}"; do
  pid=${entry%%:*} name=${entry#*:}
  wait "$pid"; code=$?
  [ "$name" = compose-check ] && [ $code = 3 ] && code=0
  [ $code = 0 ] || failed+=("$name")
done
for entry in "${pids[@]}"; do cat "test-artifacts/${entry#*:}.log"; done
if [ ${#failed[@]} -gt 0 ]; then
  case " ${failed[*]} " in
    *tsc*) echo "[test] TypeScript errors (${failed[*]})" ;;
    *) echo "[test] docker-compose.yml is not a valid Compose file" ;;
  esac
  finish fail
fi
[ ${#pids[@]} -gt 0 ] && phase "compile"

projects=()
if [ $FULL = 0 ]; then
  for tier in "${TIERS[@]}"; do
    case "$tier" in
      int) projects+=(--project int-local --project int-services --project int-serial) ;;
      *) projects+=(--project "$tier") ;;
    esac
  done
fi
rm -f test-artifacts/vitest.json.next
NO_COLOR=1 EFFECTD_SKIP_BUILD=1 npx vitest run "${projects[@]}" --reporter=default --reporter=json --outputFile.json=test-artifacts/vitest.json.next "$@"
status=$?
# Written under another name first: a run that leaves no report never passes on the last run's.
[ -f test-artifacts/vitest.json.next ] && mv test-artifacts/vitest.json.next test-artifacts/vitest.json || rm -f test-artifacts/vitest.json
phase vitest
finish ok
node scripts/test-summary.mjs test-artifacts/vitest.json
summary=$?
[ $status -eq 0 ] && [ $summary -eq 0 ] || exit 1
