#!/usr/bin/env bash
# The cluster scenario of scripts/bench.sh: three server nodes on loopback,
# one PostgreSQL database made for the run (dropped after) and NATS.
#
#   scripts/bench-cluster.sh            # run by scripts/bench.sh (BENCH_ONLY=cluster)
#
# Three parts, every figure in one run on one machine:
#   hop       200 tables at think 0, three load generators (one per node),
#             each table's seats on its owner, then spread over the three
#             nodes (--seat-urls): the cost of the NATS hop, in alternating
#             rounds, medians taken;
#   capacity  steps of CLUSTER_STEPS tables (default 2500 5000 7500
#             10000) at think 1 s over three load generator processes
#             (none passes the open-file limit), each step on fresh nodes
#             and a fresh database, held CLUSTER_HOLD s after
#             CLUSTER_WARMUP s; a step holds at p99 <= 50 ms with nothing
#             failed, and the steps stop at the first that does not. The
#             CPU of the nodes, the load generators, PostgreSQL and NATS
#             is measured over each window;
#   failover  first two matches played to their end on every node (so that,
#             as in production, every node holds finished matches), then
#             CLUSTER_KILLS times (default 20) kill -9 one node under load,
#             time until every table it owned runs on another node (a live
#             lease of another node), and restart it; then CLUSTER_STOPS
#             times (default 10) SIGSTOP one node until the same holds, and
#             SIGCONT it; at the end, every move the load generators had
#             acknowledged is looked up in the event log (lost: must be 0),
#             and the seats a table had to play by itself (a timeout or a
#             bot for a seat whose player's connection was left behind:
#             orphaned, must be 0) are counted.
#
# Settings (environment):
#   BENCH_DATABASE_URL   default postgres://postgres@127.0.0.1:5432/test
#   BENCH_NATS_URL       default nats://127.0.0.1:4222
#   CLUSTER_ONLY="hop capacity failover"
#   CLUSTER_STEPS="2500 5000 7500 10000" CLUSTER_HOLD=60 CLUSTER_WARMUP=15
#   CLUSTER_KILLS=20 CLUSTER_STOPS=10 CLUSTER_ROUNDS=3
#   CLUSTER_WORKERS (runtime threads per node; default: one per core)
#   CLUSTER_LEASE_MS=5000 (the default lease)
#   BENCH_OUT, BENCH_SERVER_BIN, BENCH_PORT (first of three node ports:
#   default 18500), BENCH_NO_BUILD as in scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$root/target/release
out=${BENCH_OUT:-$root/target/bench}/cluster
server_bin=${BENCH_SERVER_BIN:-$bin/spades-server}
load=$bin/spades-load
base=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
nats=${BENCH_NATS_URL:-nats://127.0.0.1:4222}
only=${CLUSTER_ONLY:-"hop capacity failover"}
steps=${CLUSTER_STEPS:-"2500 5000 7500 10000"}
warmup=${CLUSTER_WARMUP:-15}
hold=${CLUSTER_HOLD:-60}
kills=${CLUSTER_KILLS:-20}
stops=${CLUSTER_STOPS:-10}
rounds=${CLUSTER_ROUNDS:-3}
lease=${CLUSTER_LEASE_MS:-5000}
duration=${BENCH_DURATION:-20}
port=${BENCH_PORT:-18500}
mkdir -p "$out"
say() { printf '\n== %s\n' "$*" >&2; }
want() { case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

if [ "${BENCH_NO_BUILD:-0}" != 1 ]; then
  say "building (release)"
  cargo build --release --locked -p spades-server -p spades-client >&2
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

db=spades_bench_$$
url="${base%/*}/$db"
psql "$base" -qc "CREATE DATABASE $db" >/dev/null
sql() { psql "$url" -tAqc "$1"; }

declare -A node_pid
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  psql "$base" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

# start_node N: node nN on port+N-1, waits until it answers.
start_node() {
  local n=$1 p=$((port + $1 - 1))
  SPADES_SERVER__BIND=127.0.0.1:$p \
  SPADES_STORAGE__DATABASE_URL=$url \
  SPADES_CLUSTER__NATS_URL=$nats \
  SPADES_CLUSTER__NODE_ID=n$n \
  SPADES_CLUSTER__LEASE_MS=$lease \
  SPADES_CLUSTER__SUBJECT_PREFIX=bench$$ \
  SPADES_TABLES__BOT=rule \
  SPADES_LIMITS__MAX_TABLES=1000000 \
  SPADES_LIMITS__MAX_CONNECTIONS=1000000 \
  SPADES_LIMITS__MESSAGES_PER_10S=1000000000 \
  SPADES_LIMITS__TABLES_PER_MINUTE_PER_IP=1000000000 \
  SPADES_LIMITS__CONNECTIONS_PER_MINUTE_PER_IP=1000000000 \
  SPADES_LIMITS__CONNECTIONS_PER_IP=0 \
  SPADES_LIMITS__REQUESTS_PER_MINUTE_PER_IP=0 \
  SPADES_LIMITS__CONNECTIONS_PER_SEAT=16 \
  SPADES_LOG__FILTER=warn \
    env ${CLUSTER_WORKERS:+TOKIO_WORKER_THREADS=$CLUSTER_WORKERS} "$server_bin" >>"$out/node-$n.log" 2>&1 &
  node_pid[$n]=$!
  pids+=("$!")
  for _ in $(seq 1 300); do
    if curl -sf "http://127.0.0.1:$p/readyz" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "${node_pid[$n]}" 2>/dev/null; then
      echo "node n$n did not start; see $out/node-$n.log" >&2; tail "$out/node-$n.log" >&2; exit 1
    fi
    sleep 0.1
  done
  echo "node n$n did not answer" >&2; exit 1
}
stop_nodes() {
  for n in 1 2 3; do kill "${node_pid[$n]}" 2>/dev/null || true; done
  for n in 1 2 3; do wait "${node_pid[$n]}" 2>/dev/null || true; done
  sql "UPDATE tables SET closed_at = 0 WHERE closed_at IS NULL" >/dev/null
}
# fresh: the nodes stopped, a new database, the nodes started again.
fresh() {
  for n in 1 2 3; do kill "${node_pid[$n]}" 2>/dev/null || true; done
  for n in 1 2 3; do wait "${node_pid[$n]}" 2>/dev/null || true; done
  psql "$base" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
  psql "$base" -qc "CREATE DATABASE $db" >/dev/null
  for n in 1 2 3; do start_node "$n"; done
}
node_url() { echo "http://127.0.0.1:$((port + $1 - 1))"; }
all_urls="$(node_url 1),$(node_url 2),$(node_url 3)"

# loads OUT-PREFIX TABLES-EACH THINK-MS SECONDS [extra args]: one load
# generator per node, at once; each writes OUT-PREFIX-N.json.
loads() {
  local prefix=$1 each=$2 think=$3 secs=$4; shift 4
  local lp=()
  for n in 1 2 3; do
    "$load" run --url "$(node_url "$n")" --server-pid "${node_pid[$n]}" --tables "$each" \
      --think-ms "$think" --warmup "$warmup" --duration "$secs" --json-out "$prefix-$n.json" "$@" \
      >"$prefix-$n.txt" 2>&1 &
    lp+=("$!")
  done
  for p in "${lp[@]}"; do wait "$p" || echo "(a load generator reported failures)" >&2; done
}

num() { grep -m1 "\"$2\":" "$1" | sed 's/.*: *//; s/,$//'; }
# combine PREFIX: total actions/s, worst p50/p99, errors, total server CPU.
combine() {
  python3 - "$1" <<'EOF'
import json, sys, glob
reports = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "-[123].json"))]
if not reports:
    print(json.dumps({"failed": "no load generator finished; see " + sys.argv[1] + "-*.txt"}))
    sys.exit(0)
def get(r, *keys):
    for k in keys:
        if isinstance(r, dict) and k in r:
            r = r[k]
        else:
            return None
    return r
actions = sum((get(r, "actions_per_s") or 0) for r in reports)
p50 = max((get(r, "latency_ms", "p50") or 0) for r in reports)
p99 = max((get(r, "latency_ms", "p99") or 0) for r in reports)
p999 = max((get(r, "latency_ms", "p999") or 0) for r in reports)
errors = sum((get(r, "errors") or 0) for r in reports)
disconnects = sum((get(r, "disconnects") or 0) for r in reports)
failures = sum((get(r, "setup_failures") or 0) for r in reports)
cpu = sum((get(r, "server_cpu_pct") or 0) for r in reports)
load_cpu = sum((get(r, "client_cpu_pct") or 0) for r in reports)
# Every load generator measures the same database and broker: the first's.
others = get(reports[0], "cpu_pct_of") or {}
def per_action(pct):
    return round(pct / 100 * 1e6 / actions, 1) if actions else None
conns = sum((get(r, "connections") or 0) for r in reports)
rss = sum((get(r, "server_rss_kib") or 0) for r in reports)
print(json.dumps({"connections": conns, "actions_per_s": round(actions, 1), "p50_ms": round(p50, 2),
                  "p99_ms": round(p99, 2), "p999_ms": round(p999, 2), "errors": errors,
                  "disconnects": disconnects, "setup_failures": failures,
                  "server_cpu_pct_sum": round(cpu, 1), "server_rss_mib_sum": round(rss / 1024, 1),
                  "load_cpu_pct_sum": round(load_cpu, 1),
                  "cpu_pct_of": {k: round(v, 1) for k, v in others.items()},
                  "cpu_us_per_action": {"nodes": per_action(cpu), "load_generators": per_action(load_cpu),
                                        **{k: per_action(v) for k, v in others.items()}},
                  "processes": len(reports)}))
EOF
}

for n in 1 2 3; do start_node "$n"; done

if want hop; then
  for r in $(seq 1 "$rounds"); do
    say "hop, round $r of $rounds: 200 tables (3 × 67), think 0, ${duration} s, seats on the owner"
    loads "$out/hop-local-$r" 67 0 "$duration"
    combine "$out/hop-local-$r" >"$out/hop-local-$r.sum.json"; cat "$out/hop-local-$r.sum.json" >&2
    say "hop, round $r of $rounds: the same, each table's seats spread over the three nodes"
    loads "$out/hop-spread-$r" 67 0 "$duration" --seat-urls "$all_urls"
    combine "$out/hop-spread-$r" >"$out/hop-spread-$r.sum.json"; cat "$out/hop-spread-$r.sum.json" >&2
  done
fi

if want capacity; then
  : >"$out/capacity-steps.jsonl"
  largest=0
  for t in $steps; do
    each=$(( (t + 2) / 3 ))
    fresh
    say "capacity: $t tables ($each per load generator and node), think 1 s, ${warmup} s warm-up, held ${hold} s"
    loads "$out/capacity-$t" "$each" 1000 "$hold" --ramp 150 --cpu-of postgres --cpu-of nats-server
    combine "$out/capacity-$t" >"$out/capacity-$t.sum.json"
    python3 - "$out/capacity-$t.sum.json" "$t" >>"$out/capacity-steps.jsonl" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["tables"] = int(sys.argv[2])
s["held"] = ("failed" not in s and s["p99_ms"] <= 50 and s["errors"] == 0 and s["disconnects"] == 0
             and s["setup_failures"] == 0 and s["actions_per_s"] >= 0.9 * s["tables"])
print(json.dumps(s))
EOF
    tail -1 "$out/capacity-steps.jsonl" >&2
    for n in 1 2 3; do
      echo "n$n: $(sql "SELECT count(*) FROM tables WHERE owner_node = 'n$n' AND finished_at IS NULL AND closed_at IS NULL") tables" >&2
    done
    if tail -1 "$out/capacity-steps.jsonl" | grep -q '"held": true'; then largest=$t; else break; fi
  done
  python3 - "$out/capacity-steps.jsonl" "$largest" >"$out/capacity.sum.json" <<'EOF'
import json, sys
print(json.dumps({"largest_held": int(sys.argv[2]), "steps": [json.loads(l) for l in open(sys.argv[1])]}))
EOF
  say "capacity: the largest step held is $largest tables"
  fresh
fi

if want failover; then
  say "failover: finished matches on every node first"
  lp=()
  for n in 1 2 3; do
    "$load" run --url "$(node_url "$n")" --tables 2 --hands 5 --no-restart --think-ms 0 --duration 25 \
      >"$out/failover-finished-$n.txt" 2>&1 &
    lp+=("$!")
  done
  for p in "${lp[@]}"; do wait "$p" || true; done
  echo "finished matches by node: $(sql "SELECT string_agg(owner_node || ': ' || n, ', ') FROM (SELECT owner_node, count(*) AS n FROM tables WHERE finished_at IS NOT NULL GROUP BY owner_node) c")" >&2
  say "failover: $kills kills and $stops stops of one node under load (300 tables at think 1 s), lease $lease ms"
  : >"$out/failover.txt"
  : >"$out/failover-stop.txt"
  : >"$out/failover-events.tsv"
  rm -f "$out"/failover-acks-[123].tsv
  lp=()
  for n in 1 2 3; do
    "$load" run --url "$(node_url "$n")" --tables 100 --think-ms 1000 --warmup 5 \
      --duration $((kills * (lease / 1000 + 12) + stops * (lease / 1000 + 8) + 30)) --json-out "$out/failover-load-$n.json" \
      --seat-urls "$all_urls" --reconnect --acks-out "$out/failover-acks-$n.tsv" >"$out/failover-load-$n.txt" 2>&1 &
    lp+=("$!")
  done
  sleep 15
  started_ms=$(sql "SELECT spades_now_ms()")
  for k in $(seq 1 "$kills"); do
    n=$(( (k - 1) % 3 + 1 ))
    ids=$(sql "SELECT string_agg(quote_literal(id), ',') FROM tables WHERE owner_node = 'n$n' AND finished_at IS NULL AND closed_at IS NULL AND seed IS NOT NULL")
    [ -n "$ids" ] || { echo "node n$n owns no table in play: skipped" >&2; continue; }
    kill_ms=$(sql "SELECT spades_now_ms()")
    printf 'kill\tn%s\t%s\n' "$n" "$kill_ms" >>"$out/failover-events.tsv"
    kill -9 "${node_pid[$n]}"; wait "${node_pid[$n]}" 2>/dev/null || true
    # Until every one of its tables (still in play) is held by a live lease
    # of another node, i.e. running there again: polled every 50 ms.
    left=1
    for _ in $(seq 1 600); do
      left=$(sql "SELECT count(*) FROM tables WHERE id IN ($ids) AND finished_at IS NULL AND closed_at IS NULL \
                  AND (owner_node IS NULL OR owner_node = 'n$n' OR lease_until < spades_now_ms())")
      [ "$left" = 0 ] && break
      sleep 0.05
    done
    moved_ms=$(( $(sql "SELECT spades_now_ms()") - kill_ms ))
    echo "$moved_ms" >>"$out/failover.txt"
    count=$(sql "SELECT count(*) FROM tables WHERE id IN ($ids)")
    echo "kill $k (n$n): its $count tables run elsewhere after $moved_ms ms ($left still unclaimed)" >&2
    start_node "$n"
    sleep 5
  done
  for k in $(seq 1 "$stops"); do
    n=$(( (k - 1) % 3 + 1 ))
    ids=$(sql "SELECT string_agg(quote_literal(id), ',') FROM tables WHERE owner_node = 'n$n' AND finished_at IS NULL AND closed_at IS NULL AND seed IS NOT NULL")
    [ -n "$ids" ] || { echo "node n$n owns no table in play: skipped" >&2; continue; }
    stop_ms=$(sql "SELECT spades_now_ms()")
    printf 'stop\tn%s\t%s\n' "$n" "$stop_ms" >>"$out/failover-events.tsv"
    kill -STOP "${node_pid[$n]}"
    left=1
    for _ in $(seq 1 600); do
      left=$(sql "SELECT count(*) FROM tables WHERE id IN ($ids) AND finished_at IS NULL AND closed_at IS NULL \
                  AND (owner_node IS NULL OR owner_node = 'n$n' OR lease_until < spades_now_ms())")
      [ "$left" = 0 ] && break
      sleep 0.05
    done
    moved_ms=$(( $(sql "SELECT spades_now_ms()") - stop_ms ))
    echo "$moved_ms" >>"$out/failover-stop.txt"
    count=$(sql "SELECT count(*) FROM tables WHERE id IN ($ids)")
    echo "stop $k (n$n): its $count tables run elsewhere after $moved_ms ms ($left still unclaimed)" >&2
    kill -CONT "${node_pid[$n]}"
    sleep 3
  done
  # The load generators close their seats on purpose when their run ends
  # (a short grace, then a bot plays): only moves before now count below.
  ended_ms=$(sql "SELECT spades_now_ms()")
  for p in "${lp[@]}"; do wait "$p" || true; done
  python3 - "$out/failover.txt" >"$out/failover.sum.json" <<'EOF'
import json, sys
ms = sorted(int(l) for l in open(sys.argv[1]) if l.strip())
pick = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))] if ms else None
print(json.dumps({"kills": len(ms), "p50_ms": pick(0.5), "p99_ms": pick(0.99), "max_ms": ms[-1] if ms else None}))
EOF
  cat "$out/failover.sum.json" >&2
  python3 - "$out/failover-stop.txt" >"$out/failover-stop.sum.json" <<'EOF'
import json, sys
ms = sorted(int(l) for l in open(sys.argv[1]) if l.strip())
pick = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))] if ms else None
print(json.dumps({"stops": len(ms), "p50_ms": pick(0.5), "p99_ms": pick(0.99), "max_ms": ms[-1] if ms else None}))
EOF
  cat "$out/failover-stop.sum.json" >&2
  # Orphaned connections: seats (of the load's tables, all people) that the
  # table played itself between the first kill and the end of the stops, because their player's
  # connection was left without frames (a timeout, or a bot once the grace
  # ran out). Think times are 1 s and turns 30 s: none should be.
  sql "SELECT json_build_object('seats_played_by_the_table', count(DISTINCT (table_id, seat)),
              'moves', count(*)) FROM actions WHERE source IN ('timeout', 'bot') AND at >= $started_ms AND at < $ended_ms" \
    >"$out/failover-orphans.sum.json"
  echo "seats the table played itself: $(cat "$out/failover-orphans.sum.json")" >&2
  # Each such move with its time, for reading against failover-events.tsv.
  sql "SELECT source || E'\t' || table_id || E'\t' || seat || E'\t' || at FROM actions
       WHERE source IN ('timeout', 'bot') AND at >= $started_ms AND at < $ended_ms ORDER BY at" \
    >"$out/failover-self-played.tsv"

  # No lost acknowledged action: every move a load generator had
  # acknowledged (--acks-out: table, seat, hand, kind, value) must be in the
  # event log, by the same seat in the same hand (a hand's number counts its
  # four bids from the start of the match's log).
  cat "$out"/failover-acks-[123].tsv >"$out/failover-acks.tsv"
  psql "$url" -tAq -c "CREATE TEMP TABLE acked (table_id TEXT, seat BIGINT, hand BIGINT, kind TEXT, value TEXT)" \
    -c "\\copy acked FROM '$out/failover-acks.tsv'" \
    -c "WITH logged AS (
          SELECT table_id, seat, kind, value,
                 (sum(CASE WHEN kind = 'bid' THEN 1 ELSE 0 END) OVER (PARTITION BY table_id ORDER BY idx) - 1) / 4 + 1 AS hand
          FROM actions WHERE table_id IN (SELECT DISTINCT table_id FROM acked))
        SELECT json_build_object('acked', count(*), 'tables', count(DISTINCT a.table_id),
               'lost', count(*) FILTER (WHERE l.table_id IS NULL))
        FROM acked a LEFT JOIN logged l USING (table_id, seat, hand, kind, value)" >"$out/failover-acks.sum.json"
  echo "acknowledged moves against the log: $(cat "$out/failover-acks.sum.json")" >&2
  # No fork: every table's log replays (the server refuses a log that does
  # not); count refusals in the logs.
  grep -h "does not replay\|could not be restored" "$out"/node-*.log | sort | uniq -c >&2 || echo "no table failed to replay" >&2
fi

stop_nodes
say "cluster figures in $out (*.sum.json)"
