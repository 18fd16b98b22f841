#!/usr/bin/env bash
# Stop what scripts/services-up.sh started.
#   - the Kafka broker (SIGTERM, up to 30 s, then SIGKILL; pid file removed; data in .data/kafka kept)
#   - PostgreSQL only when EFFECTD_STOP_PG=1 (by default it is left running: it may be the machine's)
# EFFECTD_SERVICES=pg|kafka|pg,kafka limits what is considered (default both).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SERVICES=${EFFECTD_SERVICES:-pg,kafka}
case ",$SERVICES," in *,both,*|*,all,*) SERVICES=pg,kafka ;; esac
want() { case ",$SERVICES," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

if want kafka; then
  bash "$SCRIPT_DIR/kafka/broker.sh" stop
fi

if want pg; then
  if [ "${EFFECTD_STOP_PG:-0}" = 1 ]; then
    if command -v pg_lsclusters >/dev/null 2>&1; then
      pg_lsclusters -h 2>/dev/null | awk '$2=="main" && $4 ~ /^online/ {print $1}' | while read -r v; do
        echo "[services] stopping PostgreSQL $v/main"
        pg_ctlcluster "$v" main stop
      done
    fi
  else
    echo "[services] PostgreSQL left running (EFFECTD_STOP_PG=1 stops it)"
  fi
fi
