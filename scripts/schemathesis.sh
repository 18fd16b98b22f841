#!/usr/bin/env bash
# schemathesis (PyPI) against a running effectd, from its own /openapi.json: every operation gets
# generated requests (valid and invalid), and each answer is checked for 5xx, undocumented status
# codes, content types and bodies that break the documented schema.
#   EFFECTD_CREDENTIALS=<data-dir>/credentials.json scripts/schemathesis.sh http://127.0.0.1:8080 [schemathesis run options…]
# (or EFFECTD_AGENT_TOKEN and EFFECTD_OPERATOR_TOKEN instead of EFFECTD_CREDENTIALS). The agent
# token is sent to every operation, the operator token to the operator ones (tag "operator").
# Tokens travel in the environment only (never on a command line), and schemathesis masks the
# Authorization header in what it prints. schemathesis is installed once into a virtualenv under
# ~/.cache/effectd (EFFECTD_TOOLS_CACHE overrides; EFFECTD_PYTHON picks the interpreter) and
# reused. EFFECTD_SCHEMATHESIS_EXAMPLES sets the cases per operation (default 25). Exits non-zero
# when a check failed.
set -euo pipefail
#   scripts/schemathesis.sh --install   only makes the virtualenv (exits non-zero when it cannot).
USAGE="usage: scripts/schemathesis.sh <effectd base URL, e.g. http://127.0.0.1:8080> [schemathesis run options…] | --install"
URL="${1:?$USAGE}"
URL="${URL%/}"
shift
VERSION=4.32.5
VENV="${EFFECTD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/effectd}/schemathesis-$VERSION"
ST="$VENV/bin/schemathesis"
if ! "$ST" --version 2>/dev/null | grep -qF "$VERSION"; then
  echo "installing schemathesis==$VERSION into $VENV" >&2
  mkdir -p "$(dirname "$VENV")"
  "${EFFECTD_PYTHON:-python3}" -m venv "$VENV"
  "$VENV/bin/pip" install --disable-pip-version-check -q "schemathesis==$VERSION" >&2
fi
[ "$URL" = "--install" ] && { "$ST" --version; exit 0; }

if [ -n "${EFFECTD_CREDENTIALS:-}" ]; then
  # The first credential of each role; read by python so no token passes through a command line.
  read_token() { python3 -c 'import json,sys; print(next(c["token"] for c in json.load(open(sys.argv[1]))["credentials"] if c["role"] == sys.argv[2]))' "$EFFECTD_CREDENTIALS" "$1"; }
  EFFECTD_AGENT_TOKEN="${EFFECTD_AGENT_TOKEN:-$(read_token agent)}"
  EFFECTD_OPERATOR_TOKEN="${EFFECTD_OPERATOR_TOKEN:-$(read_token operator)}"
fi
: "${EFFECTD_AGENT_TOKEN:?set EFFECTD_CREDENTIALS=<data-dir>/credentials.json, or EFFECTD_AGENT_TOKEN and EFFECTD_OPERATOR_TOKEN}"
: "${EFFECTD_OPERATOR_TOKEN:?set EFFECTD_CREDENTIALS=<data-dir>/credentials.json, or EFFECTD_AGENT_TOKEN and EFFECTD_OPERATOR_TOKEN}"
export EFFECTD_AGENT_TOKEN EFFECTD_OPERATOR_TOKEN

CONFIG="$(mktemp -t effectd-schemathesis-XXXXXX.toml)"
trap 'rm -f "$CONFIG"' EXIT
# schemathesis substitutes ${VAR} from the environment when it loads the file: no token is written here.
cat >"$CONFIG" <<'TOML'
headers = { Authorization = "Bearer ${EFFECTD_AGENT_TOKEN}" }

[[operations]]
include-tag = "operator"
headers = { Authorization = "Bearer ${EFFECTD_OPERATOR_TOKEN}" }
TOML

exec "$ST" --no-color --config-file "$CONFIG" run "$URL/openapi.json" \
  --url "$URL" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --phases examples,coverage,fuzzing,stateful \
  --max-examples "${EFFECTD_SCHEMATHESIS_EXAMPLES:-25}" \
  --workers 2 \
  --request-timeout 10 \
  "$@"
