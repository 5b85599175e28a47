#!/usr/bin/env bash
# The cluster behind docker/nginx-cluster.conf, live: three nodes on
# loopback (PostgreSQL and NATS as for the cluster tests), nginx in front
# with the repository's config (only its upstream addresses, port and pid
# file changed), and the load generator playing through nginx alone: every
# WebSocket goes to the next node round robin, so a table's seats sit on
# different nodes and their moves are relayed over NATS. Halfway through,
# one node is drained (SIGTERM); its clients reconnect through nginx and
# resume. Passes when matches were played, no connection was lost for good,
# nothing was refused (a change frame after a gap while a table moves is
# healed with `sync`, as the protocol says), and the nodes took connections.
#
#   scripts/proxy-test.sh                    # builds the debug binaries
#   PROXY_NO_BUILD=1 scripts/proxy-test.sh   # uses target/debug as built
#
# Settings: PROXY_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test),
# PROXY_NATS_URL (default nats://127.0.0.1:4222), PROXY_PORT (first of four
# ports, default 18600). About a minute on built binaries.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
base=${PROXY_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
nats=${PROXY_NATS_URL:-nats://127.0.0.1:4222}
port=${PROXY_PORT:-18600}
say() { echo "proxy-test: $*"; }
fail() {
  echo "proxy-test: FAIL: $*" >&2
  mkdir -p "$root/target" && rm -rf "$root/target/proxy-test" && cp -r "$work" "$root/target/proxy-test" \
    && echo "proxy-test: the logs are in target/proxy-test" >&2
  for n in 1 2 3; do
    [ -f "$work/node-$n.log" ] && { echo "--- node n$n, last lines:" >&2; tail -n 5 "$work/node-$n.log" >&2; }
  done
  exit 1
}
command -v nginx >/dev/null || { echo "proxy-test: nginx is missing (apt-get install nginx-light)" >&2; exit 1; }

if [ "${PROXY_NO_BUILD:-0}" != 1 ]; then
  cargo build --locked -p spades-server -p spades-client >&2
fi
server=$root/target/debug/spades-server
load=$root/target/debug/spades-load
work=$(mktemp -d)
db=spades_proxy_$$
url="${base%/*}/$db"
psql "$base" -qc "CREATE DATABASE $db" >/dev/null
declare -A pid
nginx_started=0
cleanup() {
  for n in 1 2 3; do [ -n "${pid[$n]:-}" ] && kill -9 "${pid[$n]}" 2>/dev/null || true; done
  [ "$nginx_started" = 1 ] && nginx -c "$work/nginx.conf" -s stop 2>/dev/null || true
  psql "$base" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

start_node() {
  local n=$1 p=$((port + $1))
  SPADES_SERVER__BIND=127.0.0.1:$p \
  SPADES_STORAGE__DATABASE_URL=$url \
  SPADES_CLUSTER__NATS_URL=$nats \
  SPADES_CLUSTER__NODE_ID=n$n \
  SPADES_CLUSTER__LEASE_MS=2000 \
  SPADES_CLUSTER__SUBJECT_PREFIX=proxy$$ \
  SPADES_SERVER__TRUSTED_PROXIES=127.0.0.1/32 \
  SPADES_LIMITS__CONNECTIONS_PER_IP=0 \
  SPADES_LIMITS__TABLES_PER_MINUTE_PER_IP=100000 \
  SPADES_LIMITS__CONNECTIONS_PER_MINUTE_PER_IP=100000 \
  SPADES_LIMITS__REQUESTS_PER_MINUTE_PER_IP=0 \
  SPADES_LIMITS__MESSAGES_PER_10S=100000 \
  SPADES_LOG__FILTER=${PROXY_LOG_FILTER:-warn} \
    "$server" >>"$work/node-$n.log" 2>&1 &
  pid[$n]=$!
  disown "${pid[$n]}"
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$p/readyz" >/dev/null 2>&1 && return 0
    kill -0 "${pid[$n]}" 2>/dev/null || fail "node n$n did not start"
    sleep 0.1
  done
  fail "node n$n did not answer on port $p"
}
for n in 1 2 3; do start_node "$n"; done

# The repository's config, pointed at the loopback nodes.
sed -e "s#server server1:8080#server 127.0.0.1:$((port + 1))#" \
    -e "s#server server2:8080#server 127.0.0.1:$((port + 2))#" \
    -e "s#server server3:8080#server 127.0.0.1:$((port + 3))#" \
    -e "s#listen 8080;#listen 127.0.0.1:$port;#" \
    -e "s#pid /tmp/nginx-spades-cluster.pid;#pid $work/nginx.pid;#" \
    -e "s#^events {#error_log $work/nginx-error.log;\nevents {#" \
    docker/nginx-cluster.conf >"$work/nginx.conf"
for n in 1 2 3; do grep -q "server 127.0.0.1:$((port + n)) " "$work/nginx.conf" || fail "upstream n$n not rewritten"; done
nginx -q -c "$work/nginx.conf" -p "$work" || fail "nginx did not start with docker/nginx-cluster.conf"
nginx_started=1
proxy=http://127.0.0.1:$port
for _ in $(seq 1 50); do curl -sf "$proxy/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
say "three nodes behind nginx at $proxy"

"$load" run --url "$proxy" --tables 6 --think-ms 50 --warmup 2 --duration 20 --reconnect --no-restart \
  --json-out "$work/load.json" >"$work/load.txt" 2>&1 &
load_pid=$!
sleep 10
say "draining n2 (SIGTERM) while the matches play"
kill -TERM "${pid[2]}"
wait "${pid[2]}" 2>/dev/null || true
unset 'pid[2]'
wait "$load_pid" || true
cat "$work/load.txt"

python3 - "$work/load.json" <<'EOF' || fail "the matches through nginx did not play cleanly (above)"
import json, sys
r = json.load(open(sys.argv[1]))
problems = []
if r["actions"] < 200:
    problems.append(f"only {r['actions']} moves were accepted")
if r["hands"] < 1:
    problems.append("no hand was finished")
for k in ("disconnects", "setup_failures"):
    if r[k]:
        problems.append(f"{k}: {r[k]} ({r['failure_reasons']})")
# A change frame that comes after a gap while the drained node's tables
# move is healed with `sync`, as the protocol says. A move whose answer was
# lost with the stopping owner is played again on the new one and may be
# refused there although it was applied (docs/cluster.md): a few such
# refusals at the drain are allowed, nothing else.
RACES = {"not_your_turn", "card_not_in_hand", "bidding_over", "bidding_not_over"}
reasons = r["failure_reasons"]
races = sum(v for k, v in reasons.items() if k in RACES)
other = {k: v for k, v in reasons.items() if k != "seq gap" and k not in RACES}
if other:
    problems.append(f"errors: {other}")
if races > 4:
    problems.append(f"{races} moves refused, more than a drain explains: {reasons}")
if problems:
    print("proxy-test: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
gaps = reasons.get("seq gap", 0)
print(f"proxy-test: {r['actions']} moves, {r['hands']} hands, {r.get('resumed', 0)} connections resumed "
      f"after the drain, {gaps} gaps healed with sync, {races} moves refused at the drain, no other error")
EOF
# Every node took connections (round robin, no sticky sessions): the two
# that still run say so in /metrics.
opened1=$(curl -sf "http://127.0.0.1:$((port + 1))/metrics" | grep -E '^spades_connections_opened_total ' | awk '{print $2}')
opened3=$(curl -sf "http://127.0.0.1:$((port + 3))/metrics" | grep -E '^spades_connections_opened_total ' | awk '{print $2}')
[ "${opened1:-0}" != 0 ] && [ "${opened3:-0}" != 0 ] || fail "a node took no connection (n1: ${opened1:-none}, n3: ${opened3:-none})"
say "connections opened: n1 $opened1, n3 $opened3"
say "ok"
