#!/usr/bin/env bash
# The test command: brings up what the tests need (PostgreSQL, the Kafka broker), builds, runs every
# suite, and ends with the line `tests: N passed, N failed[, N skipped]`. Extra args go to vitest.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p test-artifacts

if [ ! -d node_modules ]; then
  echo "[test] installing dependencies (npm ci)"
  npm ci --no-audit --no-fund || { echo "tests: 0 passed, 1 failed"; exit 1; }
fi
echo "[test] starting services (PostgreSQL, Kafka)"
npm run --silent services:up || { echo "[test] services:up failed"; echo "tests: 0 passed, 1 failed"; exit 1; }
bash scripts/ensure-debian-package.sh chromium "${EFFECTD_CHROMIUM:-/usr/bin/chromium}" || { echo "[test] chromium (for the console's browser test) could not be installed"; echo "tests: 0 passed, 1 failed"; exit 1; }
bash scripts/ensure-debian-package.sh prometheus "${EFFECTD_PROMETHEUS:-/usr/bin/prometheus}" --no-install-recommends || { echo "[test] prometheus (for the dashboard's queries) could not be installed"; echo "tests: 0 passed, 1 failed"; exit 1; }
echo "[test] compiling (tsc, strict)"
if ! npx tsc --noEmit || ! npx tsc -p tsconfig.build.json; then
  echo "[test] TypeScript errors"; echo "tests: 0 passed, 1 failed"; exit 1
fi

# docker-compose.yml is checked without a Docker engine (test/int/compose.int.spec.ts checks it against
# the scripts too); exit 3 means the validator could not be installed, and that test says so.
bash scripts/compose-check.sh
case $? in
  0|3) ;;
  *) echo "[test] docker-compose.yml is not a valid Compose file"; echo "tests: 0 passed, 1 failed"; exit 1 ;;
esac

NO_COLOR=1 EFFECTD_SKIP_BUILD=1 npx vitest run --reporter=default --reporter=json --outputFile.json=test-artifacts/vitest.json "$@"
status=$?
[ -n "${EFFECTD_CI_START:-}" ] && echo "[test] CI wall time so far: $(( $(date +%s) - EFFECTD_CI_START )) s"
node scripts/test-summary.mjs test-artifacts/vitest.json
summary=$?
[ $status -eq 0 ] && [ $summary -eq 0 ] || exit 1
