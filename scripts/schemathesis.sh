#!/usr/bin/env bash
# Schemathesis against the live OpenAPI document: starts the debug server
# (in-memory storage, the per-address limits off) on a free port and runs
# Schemathesis against /api/v1/openapi.json, bounded (a fixed number of
# examples per operation, no stateful phase, a time limit). Fails on any
# 5xx, any response the document does not describe (status, content type,
# headers, body schema), a 405 without `Allow`, and accepted data the
# document says is invalid.
#
#   scripts/schemathesis.sh              # 100 examples per operation
#   SCHEMATHESIS_EXAMPLES=1000 scripts/schemathesis.sh
#
# Schemathesis comes from PyPI into a virtual environment under target/
# (made once, then reused). Needs python3 (with venv), curl and cargo.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
examples=${SCHEMATHESIS_EXAMPLES:-100}
time_limit=${SCHEMATHESIS_TIME_LIMIT:-600}
version=${SCHEMATHESIS_VERSION:-4.32.5}
venv=$root/target/schemathesis-venv
out=$root/target/schemathesis
mkdir -p "$out"

say() { echo "schemathesis.sh: $*" >&2; }

if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "version $version\$"; then
  say "installing schemathesis $version into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
fi

say "building the debug server"
cargo build --quiet -p spades-server --bin spades-server
server_bin=$root/target/debug/spades-server

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# A SQLite store of the run's own (not in memory), so that the command
# line can make an operator in it.
data=$(mktemp -d)
export SPADES_STORAGE__DATA_DIR=$data
SPADES_SERVER__BIND=127.0.0.1:$port \
SPADES_TABLES__BOT=rule \
SPADES_LIMITS__MAX_TABLES=1000000 \
SPADES_LIMITS__TABLES_PER_MINUTE_PER_IP=0 \
SPADES_LIMITS__ACCOUNTS_PER_HOUR_PER_IP=0 \
SPADES_ACCOUNTS__RENAME_INTERVAL_SECS=0 \
SPADES_ACCOUNTS__PASSWORDS=true \
SPADES_LIMITS__CONNECTIONS_PER_MINUTE_PER_IP=0 \
SPADES_LIMITS__CONNECTIONS_PER_IP=0 \
SPADES_LIMITS__REQUESTS_PER_MINUTE_PER_IP=0 \
SPADES_LOG__FILTER=warn \
  "$server_bin" >"$out/server.log" 2>&1 &
server_pid=$!
cleanup() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT INT TERM

for _ in $(seq 1 100); do
  if curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    say "the server did not start:"; cat "$out/server.log" >&2; exit 1
  fi
  sleep 0.1
done

# A table, so the operations on one table reach their 200s (and their
# bodies are checked against the document) instead of only 404s.
table=$(curl -sf -X POST "http://127.0.0.1:$port/api/v1/tables" | python3 -c 'import json,sys; print(json.load(sys.stdin)["table"])')

# A guest account's sign-in: `field` of the answer (token, or the account's
# id or name).
sign_in() {
  curl -sf -X POST "http://127.0.0.1:$port/api/v1/accounts/guest" -H 'content-type: application/json' \
    -d "{\"device_secret\": \"schemathesis-device-$1-000000000000000000\", \"session\": \"bearer\"}" |
    python3 -c "import json,sys; a=json.load(sys.stdin); print(a['token'] if '$2' == 'token' else a['account']['$2'])"
}
# The signed-in player of the main run is an operator (made as the first
# one is, on the command line), so that the operators' routes reach their
# 200s; another account is the one they find and sanction.
"$server_bin" admin grant "$(sign_in main name)" >/dev/null
player=$(sign_in player id)
cat >"$out/schemathesis.toml" <<TOML
[parameters]
"path.id" = "$table"
"path.account" = "$player"
TOML

# A session, so the operations of a signed-in player reach their 200s too.
# Signing out (DELETE) ends it: those operations run last, on their own.
session() {
  sign_in "$1" token
}

say "running against http://127.0.0.1:$port ($examples examples per operation, at most ${time_limit} s)"
start=$(date +%s)
status=0
# From target/schemathesis, where Schemathesis keeps its cache. One
# worker: with two (threads), CPython 3.11's AST conversion, whose
# recursion count is shared by the interpreter's threads, can fail inside
# Hypothesis ("AST constructor recursion depth mismatch") while it
# describes a strategy, an error of the run and not of the server.
run() {
  local token; token=$(session "$1"); shift
  (cd "$out" && timeout --signal=INT "$time_limit" \
  "$venv/bin/schemathesis" --config-file "$out/schemathesis.toml" run "http://127.0.0.1:$port/api/v1/openapi.json" \
    --url "http://127.0.0.1:$port" \
    --header "Authorization: Bearer $token" \
    "$@" \
    --phases examples,coverage,fuzzing \
    --checks all \
    --exclude-checks ignored_auth,use_after_free,ensure_resource_availability,object_level_authorization \
    --max-examples "$examples" \
    --seed "${SCHEMATHESIS_SEED:-14}" \
    --workers 1 \
    --request-timeout 10 \
    --suppress-health-check all \
    --no-color \
    --report junit --report-dir "$out")
}
run main --exclude-method DELETE || status=$?
run signout --include-method DELETE || status=$?
say "finished in $(( $(date +%s) - start )) s with status $status (report: $out)"
if grep -q "panicked" "$out/server.log"; then
  say "the server panicked:"; grep -A5 panicked "$out/server.log" >&2; exit 1
fi
exit "$status"
