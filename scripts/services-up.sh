#!/usr/bin/env bash
# Bring up the services effectd's integration tests need (idempotent; safe to run again):
#   - PostgreSQL (Debian package, cluster <newest version>/main): role effectd/effectd,
#     databases effectd and effectd_test owned by it.
#   - Apache Kafka (from Maven Central, KRaft, single broker+controller) on 127.0.0.1:9092,
#     state in .data/kafka/, topics effectd.commands(6) effectd.outcomes(6) effectd.dlq(1).
# Meant for Debian 12 as root (installs postgresql / openjdk-17-jre-headless / maven if missing).
#
# Environment:
#   EFFECTD_SERVICES               pg | kafka | pg,kafka (default: both)
#   EFFECTD_KAFKA_PORT             default 9092
#   EFFECTD_KAFKA_CONTROLLER_PORT  default 9093
#   (more Kafka knobs: see scripts/kafka/broker.sh)
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
T0=$(date +%s%N)

SERVICES=${EFFECTD_SERVICES:-pg,kafka}
case ",$SERVICES," in *,both,*|*,all,*) SERVICES=pg,kafka ;; esac
want() { case ",$SERVICES," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
want pg || want kafka || { echo "EFFECTD_SERVICES='$SERVICES': expected pg, kafka or pg,kafka" >&2; exit 2; }

PG_ROLE=effectd
PG_PASSWORD=effectd
PG_DATABASES=(effectd effectd_test)

log() { echo "[services] $*"; }
die() { echo "[services] ERROR: $*" >&2; exit 1; }

# shellcheck source=lib/apt.sh
source "$SCRIPT_DIR/lib/apt.sh"

# ---------------------------------------------------------------- PostgreSQL
PG_VERSION=""
PG_PORT=""

pg_server_installed() {
  command -v pg_ctlcluster >/dev/null 2>&1 && command -v pg_lsclusters >/dev/null 2>&1 &&
    ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1
}

# "<version> <port> <status>" of cluster <v>/main
pg_cluster_line() { pg_lsclusters -h 2>/dev/null | awk -v v="$1" '$1==v && $2=="main" {print $1, $3, $4}'; }

as_postgres_psql() {
  # cd / : psql would otherwise warn that it cannot chdir into the repo as user postgres.
  (cd / && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres "$@")
}

pg_up() {
  if ! pg_server_installed; then
    apt_install postgresql
  fi
  pg_server_installed || die "PostgreSQL server still missing after apt-get install postgresql"

  # Newest major that has a 'main' cluster; otherwise the newest installed major (create its cluster).
  PG_VERSION=$(pg_lsclusters -h 2>/dev/null | awk '$2=="main" {print $1}' | sort -V | tail -n1)
  if [ -z "$PG_VERSION" ]; then
    PG_VERSION=$(ls /usr/lib/postgresql | sort -V | tail -n1)
    log "creating PostgreSQL cluster $PG_VERSION/main"
    pg_createcluster "$PG_VERSION" main >/dev/null
  fi
  local line status
  line=$(pg_cluster_line "$PG_VERSION")
  [ -n "$line" ] || die "cluster $PG_VERSION/main not listed by pg_lsclusters"
  PG_PORT=$(echo "$line" | awk '{print $2}')
  status=$(echo "$line" | awk '{print $3}')
  if [[ "$status" != online* ]]; then
    log "starting PostgreSQL $PG_VERSION/main (port $PG_PORT)"
    pg_ctlcluster "$PG_VERSION" main start
  else
    log "PostgreSQL $PG_VERSION/main already online (port $PG_PORT)"
  fi
  local i
  for i in $(seq 1 60); do
    pg_isready -q -h 127.0.0.1 -p "$PG_PORT" && break
    sleep 0.5
  done
  pg_isready -q -h 127.0.0.1 -p "$PG_PORT" || die "PostgreSQL is not accepting connections on 127.0.0.1:$PG_PORT"

  as_postgres_psql <<SQL
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_ROLE') THEN
    CREATE ROLE $PG_ROLE LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
  ELSE
    ALTER ROLE $PG_ROLE LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
  END IF;
END
\$\$;
SQL
  local db
  for db in "${PG_DATABASES[@]}"; do
    if [ "$(as_postgres_psql -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" = 1 ]; then
      as_postgres_psql -c "ALTER DATABASE $db OWNER TO $PG_ROLE"
    else
      log "creating database $db"
      as_postgres_psql -c "CREATE DATABASE $db OWNER $PG_ROLE"
    fi
  done

  # Check the login the app uses, over TCP with the password. synchronous_commit stays at its default (on).
  local sc
  sc=$(cd / && PGPASSWORD=$PG_PASSWORD PGCONNECT_TIMEOUT=5 psql -X -h 127.0.0.1 -p "$PG_PORT" -U "$PG_ROLE" -d effectd -tAc 'SHOW synchronous_commit') ||
    die "cannot log in as $PG_ROLE on 127.0.0.1:$PG_PORT (check pg_hba.conf)"
  if [ "$sc" != on ]; then
    echo "[services] WARNING: synchronous_commit is '$sc' for $PG_ROLE (expected on): commits are not durable" >&2
  fi
  log "postgres ready: postgres://$PG_ROLE:$PG_PASSWORD@127.0.0.1:$PG_PORT/effectd (and /effectd_test)"
}

# ---------------------------------------------------------------- Kafka
KAFKA_PORT=${EFFECTD_KAFKA_PORT:-9092}
KAFKA_VERSION=""

kafka_up() {
  bash "$SCRIPT_DIR/kafka/broker.sh" start
  KAFKA_VERSION=$(bash "$SCRIPT_DIR/kafka/broker.sh" version)
  (cd "$REPO_ROOT" && EFFECTD_KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT" node "$SCRIPT_DIR/kafka/ensure-topics.mjs")
}

if want pg; then pg_up; fi
if want kafka; then kafka_up; fi

elapsed=$(( ($(date +%s%N) - T0) / 1000000 ))
echo
echo "services up in $((elapsed / 1000)).$(printf %03d $((elapsed % 1000)) | cut -c1)s"
if want pg; then echo "  postgres: postgres://$PG_ROLE:$PG_PASSWORD@127.0.0.1:$PG_PORT/effectd (tests: .../effectd_test, PostgreSQL $PG_VERSION)"; fi
if want kafka; then echo "  kafka: 127.0.0.1:$KAFKA_PORT (Apache Kafka $KAFKA_VERSION, KRaft)"; fi
