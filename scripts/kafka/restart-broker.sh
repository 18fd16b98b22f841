#!/usr/bin/env bash
# Restart only the local Kafka broker (data, topics and committed offsets are kept):
# stop (SIGTERM, up to 30 s, then SIGKILL), start, wait until it serves again.
# Used by tests that need a broker restart mid-run. Same env as scripts/kafka/broker.sh.
set -euo pipefail
exec bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/broker.sh" restart
