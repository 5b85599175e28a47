#!/usr/bin/env bash
# Backup and restore, tried for real on both databases (docs/operations.md
# gives the same commands for operators):
#
#   SQLite      an online backup (sqlite3 ".backup") while the server runs
#               and bots play, restored into a fresh data directory; a new
#               server on it lists the backed-up matches.
#   PostgreSQL  pg_dump -Fc while the server runs and writes, pg_restore
#               into a fresh database; a new server on it lists them too.
#
#   scripts/backup-test.sh                  # both (PostgreSQL when reachable)
#   scripts/backup-test.sh --ops-only       # only the docs/ops checks below
#   BACKUP_NO_BUILD=1 scripts/backup-test.sh
#
# Settings (environment):
#   BACKUP_PG_URL=postgres://postgres@127.0.0.1:5432/postgres
#                          an admin URL of a PostgreSQL server; the script
#                          creates and drops databases of its own there.
#                          Empty: the PostgreSQL half is skipped.
#   BACKUP_BIN=target/debug  where spades-server and spades-load are
#   BACKUP_NO_BUILD=1      do not build them first
#   BACKUP_PORT=18620      first of two ports on 127.0.0.1
#
# It first checks the files of docs/ops (see the section below).
#
# Needs sqlite3, pg_dump, pg_restore, psql, curl, python3 with PyYAML;
# nginx and caddy when present. Bounded: about 30 s on built binaries;
# every wait has a deadline.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=${BACKUP_BIN:-$root/target/debug}
pg_admin=${BACKUP_PG_URL-postgres://postgres@127.0.0.1:5432/postgres}
port=${BACKUP_PORT:-18620}
work=$(mktemp -d "${TMPDIR:-/tmp}/spades-backup.XXXXXX")
pids=()
pg_dbs=()

cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for db in "${pg_dbs[@]}"; do
    psql -q "$pg_admin" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "backup-test: FAIL: $*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*" >&2; }

# ------------------------------------------------- the operations files
# docs/ops: the YAML and JSON parse, the alert rules and the dashboard name
# only metrics the server exports and the dashboard shows every one of
# them; nginx and Caddy check their files when installed.
step "docs/ops files"
python3 - "$root" <<'PY'
import json, pathlib, re, sys
import yaml
root = pathlib.Path(sys.argv[1])
src = "\n".join(p.read_text() for p in (root / "crates/server/src").rglob("*.rs"))
exported = set(re.findall(r'metrics::(?:counter|gauge|histogram)!\(\s*"(spades_[a-z_]+)"', src))
assert exported, "no metrics found in the source"
alerts = yaml.safe_load((root / "docs/ops/prometheus-alerts.yml").read_text())
rules = [r for g in alerts["groups"] for r in g["rules"]]
assert rules and all({"alert", "expr", "labels", "annotations"} <= r.keys() for r in rules)
dash = json.loads((root / "docs/ops/grafana-dashboard.json").read_text())
exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
def names(text):
    return {re.sub(r"_(bucket|count|sum)$", "", n) for n in re.findall(r"\bspades_[a-z_]+", text)}
used_alerts = set().union(*(names(r["expr"]) for r in rules))
used_dash = set().union(*(names(e) for e in exprs))
for what, used in (("alert rules", used_alerts), ("dashboard", used_dash)):
    unknown = used - exported
    assert not unknown, f"the {what} name metrics the server does not export: {sorted(unknown)}"
missing = exported - used_dash
assert not missing, f"the dashboard does not show {sorted(missing)}"
print(f"{len(rules)} alert rules and {len(dash['panels'])} panels over {len(exported)} metrics", file=sys.stderr)
PY
if command -v nginx >/dev/null; then
  mkdir -p "$work/nginx"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=cards.example.org \
    -keyout "$work/nginx/key.pem" -out "$work/nginx/cert.pem" 2>/dev/null
  sed -e "s#/etc/letsencrypt/live/cards.example.org/fullchain.pem#$work/nginx/cert.pem#" \
      -e "s#/etc/letsencrypt/live/cards.example.org/privkey.pem#$work/nginx/key.pem#" \
      -e "s#/tmp/nginx-spades.pid#$work/nginx/nginx.pid#" docs/ops/nginx.conf >"$work/nginx/nginx.conf"
  nginx -q -t -c "$work/nginx/nginx.conf" || fail "docs/ops/nginx.conf does not pass nginx -t"
  echo "nginx -t: ok" >&2
else
  echo "nginx is not installed: docs/ops/nginx.conf not checked (apt-get install nginx-light)" >&2
fi
if command -v caddy >/dev/null; then
  caddy validate --config docs/ops/Caddyfile --adapter caddyfile >/dev/null 2>&1 ||
    fail "docs/ops/Caddyfile does not pass caddy validate"
  echo "caddy validate: ok" >&2
else
  echo "caddy is not installed: docs/ops/Caddyfile not checked (apt-get install caddy)" >&2
fi
[ "${1:-}" = --ops-only ] && { echo "backup-test: ok (operations files only)" >&2; exit 0; }

for tool in sqlite3 curl python3; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install sqlite3 curl python3)"
done
if [ "${BACKUP_NO_BUILD:-0}" != 1 ]; then
  step "building spades-server and spades-load"
  cargo build -q -p spades-server -p spades-client --bin spades-server --bin spades-load >&2
fi
for b in spades-server spades-load; do
  [ -x "$bin/$b" ] || fail "no $bin/$b: build first or unset BACKUP_NO_BUILD"
done

# start_server NAME PORT DATABASE_URL DATA_DIR: runs a server in the
# background and waits (at most 20 s) until /readyz answers 200.
start_server() {
  local name=$1 p=$2
  SPADES_SERVER__BIND=127.0.0.1:$p \
  SPADES_STORAGE__DATABASE_URL=$3 \
  SPADES_STORAGE__DATA_DIR=$4 \
  SPADES_LIMITS__REQUESTS_PER_MINUTE_PER_IP=100000 \
  SPADES_LIMITS__TABLES_PER_MINUTE_PER_IP=100000 \
  SPADES_LIMITS__CONNECTIONS_PER_MINUTE_PER_IP=100000 \
  SPADES_LIMITS__CONNECTIONS_PER_IP=100000 \
    "$bin/spades-server" -c /dev/null >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/readyz")" = 200 ]; then
      return 0
    fi
    sleep 0.1
  done
  cat "$work/$name.log" >&2
  fail "$name did not become ready on port $p"
}

stop_last_server() {
  local p=${pids[-1]}
  kill -TERM "$p"
  timeout 20 tail --pid="$p" -f /dev/null || fail "the server did not stop within 20 s"
  wait "$p" 2>/dev/null || true
  unset 'pids[-1]'
}

# Bots play on the server at port $1 for a few seconds, in the background.
play() {
  "$bin/spades-load" run --url "http://127.0.0.1:$1" --tables 4 --ramp 50 --warmup 0 --duration 6 \
    --json-out "$work/load-$1.json" >"$work/load-$1.log" 2>&1 &
  pids+=($!)
}

# match_ids PORT: the ids the server's match list shows, sorted.
match_ids() {
  curl -sf "http://127.0.0.1:$1/api/v1/matches?limit=200" |
    python3 -c 'import json,sys; print("\n".join(sorted(m["table"] for m in json.load(sys.stdin))))'
}

# check_restored EXPECTED_IDS_FILE PORT: the restored server lists exactly
# the matches of the backup, and each one's record reads.
check_restored() {
  local expected=$1 p=$2
  [ -s "$expected" ] || fail "the backup holds no match"
  match_ids "$p" >"$work/restored-ids"
  diff -u "$expected" "$work/restored-ids" >&2 || fail "the restored server lists other matches than the backup"
  while read -r id; do
    curl -sf "http://127.0.0.1:$p/api/v1/matches/$id" >/dev/null || fail "match $id does not read back"
  done <"$expected"
  echo "restored: $(wc -l <"$expected") matches, every record reads" >&2
}

# ---------------------------------------------------------------- SQLite
step "SQLite: online backup while the server writes"
data=$work/sqlite-data
start_server sqlite "$port" "" "$data"
play "$port"
sleep 3
backup=$work/spades-backup.db
# The online backup API: a consistent copy while the server keeps writing.
sqlite3 "$data/spades.db" ".timeout 5000" ".backup '$backup'"
[ "$(sqlite3 "$backup" 'PRAGMA integrity_check')" = ok ] || fail "the backup is damaged"
sqlite3 "$backup" "SELECT id FROM tables WHERE seed IS NOT NULL ORDER BY id" | sort >"$work/sqlite-ids"
before=$(wc -l <"$work/sqlite-ids")
sleep 2
live=$(sqlite3 "$data/spades.db" "SELECT count(*) FROM actions")
saved=$(sqlite3 "$backup" "SELECT count(*) FROM actions")
echo "backed up $before matches, $saved actions (the live log has $live by now)" >&2
wait "${pids[-1]}" || true
unset 'pids[-1]'
stop_last_server

step "SQLite: restore into a fresh data directory"
restored=$work/sqlite-restored
mkdir -p "$restored"
cp "$backup" "$restored/spades.db"
start_server sqlite-restored "$((port + 1))" "" "$restored"
check_restored "$work/sqlite-ids" "$((port + 1))"
stop_last_server

# ------------------------------------------------------------ PostgreSQL
if [ -z "$pg_admin" ]; then
  echo "PostgreSQL: skipped (BACKUP_PG_URL is empty)" >&2
elif ! psql -q "$pg_admin" -c 'SELECT 1' >/dev/null 2>&1; then
  echo "PostgreSQL: skipped (no server answers at BACKUP_PG_URL)" >&2
else
  for tool in pg_dump pg_restore; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install postgresql-client)"
  done
  suffix=$$_$RANDOM
  src=spades_backup_src_$suffix
  dst=spades_backup_dst_$suffix
  pg_dbs+=("$src" "$dst")
  base=${pg_admin%/*}
  psql -q "$pg_admin" -c "CREATE DATABASE $src" >/dev/null

  step "PostgreSQL: pg_dump while the server writes"
  start_server postgres "$port" "$base/$src" "$work/unused"
  play "$port"
  sleep 3
  dump=$work/spades.dump
  pg_dump --format=custom --no-owner --file="$dump" "$base/$src"
  wait "${pids[-1]}" || true
  unset 'pids[-1]'
  stop_last_server

  step "PostgreSQL: pg_restore into a fresh database"
  psql -q "$pg_admin" -c "CREATE DATABASE $dst" >/dev/null
  pg_restore --no-owner --exit-on-error --dbname="$base/$dst" "$dump"
  psql -qtA "$base/$dst" -c "SELECT id FROM tables WHERE seed IS NOT NULL ORDER BY id" | sort >"$work/pg-ids"
  echo "backed up $(wc -l <"$work/pg-ids") matches" >&2
  start_server postgres-restored "$((port + 1))" "$base/$dst" "$work/unused"
  check_restored "$work/pg-ids" "$((port + 1))"
  stop_last_server
fi

echo "backup-test: ok" >&2
