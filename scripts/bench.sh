#!/usr/bin/env bash
# The Spades server's capacity benchmark: one command from a clean clone.
#
#   scripts/bench.sh                 # the full run (about 11 minutes after the build)
#   BENCH_QUICK=1 scripts/bench.sh   # a short run (about 3 minutes) to try it
#
# Builds the release binaries, then runs four scenarios, each against a
# fresh server on loopback with the load generator beside it on the same
# machine:
#   1. capacity:   tables at a human pace (1 s think time), raised step by
#                  step until p99 latency passes 50 ms or anything fails;
#   2. throughput: 200 tables at think time 0;
#   3. memory:     server RSS per idle table and per idle connection;
#   4. raw ceiling: a bare tokio-tungstenite echo server (spades-echo) under
#                  the same load generator, for scale.
# The server keeps its event log in memory (storage.in_memory), so the disk
# is not what is measured. Figures go to stdout and to JSON files in
# $BENCH_OUT (default target/bench); summary.md and summary.json hold the
# table against the targets. See docs/benchmarks.md.
#
# Settings (environment):
#   BENCH_QUICK=1          short steps and windows
#   BENCH_OUT=dir          where the reports go (default target/bench)
#   BENCH_ONLY="a b"       only these scenarios (capacity throughput memory echo
#                          cluster lean); cluster (three nodes on PostgreSQL and
#                          NATS, scripts/bench-cluster.sh) runs only when named;
#                          lean (an older server against this one, alternating
#                          rounds: actions/s, bytes per change, CPU per action,
#                          at think 0 and at 1 s think) needs BENCH_BASE_BIN
#   BENCH_BASE_BIN=path    the older server binary the lean scenario compares
#                          BENCH_SERVER_BIN (default: this build) with
#   BENCH_LEAN_TABLES=2000 tables of the lean scenario's 1 s-think step
#   BENCH_STEPS=1000,2000  capacity steps (default: 1000 to the fd limit)
#   BENCH_HOLD=60          seconds each capacity step is held
#   BENCH_DURATION=20      seconds measured in each throughput and echo run
#   BENCH_ROUNDS=3         alternating throughput/echo rounds (median taken)
#   BENCH_SERVER_BIN=path  a server binary other than target/release/spades-server
#   BENCH_PORT=18400       first port used (three are used)
#   BENCH_NO_BUILD=1       use the binaries already built
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

quick=${BENCH_QUICK:-0}
out=${BENCH_OUT:-$root/target/bench}
only=${BENCH_ONLY:-"memory throughput echo capacity"}
port=${BENCH_PORT:-18400}
bin=$root/target/release
server_bin=${BENCH_SERVER_BIN:-$bin/spades-server}
mkdir -p "$out"
for s in $only; do rm -f "$out/$s.json" "$out/$s"-*.json; done

if [ "$quick" = 1 ]; then
  hold=${BENCH_HOLD:-15}; settle=5; duration=${BENCH_DURATION:-10}; warmup=3
  rounds=${BENCH_ROUNDS:-1}; mem_tables=1000; mem_conns=2000
else
  hold=${BENCH_HOLD:-60}; settle=10; duration=${BENCH_DURATION:-20}; warmup=5
  rounds=${BENCH_ROUNDS:-3}; mem_tables=5000; mem_conns=10000
fi

say() { printf '\n== %s\n' "$*" >&2; }

# Every connection is a file descriptor, in the server and in the load
# generator: raise the soft limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fds=$(ulimit -n)
# Each process needs some descriptors besides its table sockets (the load
# generator's REST calls, tables being replaced): keep 200 spare.
max_tables=$(( (fds - 200) / 4 ))
if [ -n "${BENCH_STEPS:-}" ]; then
  steps=$BENCH_STEPS
elif [ "$quick" = 1 ]; then
  steps="250,500,1000"
else
  steps=""
  for t in 1000 2000 3000 4000 5000 6000 8000 10000 12000; do
    if [ "$t" -le "$max_tables" ]; then steps="$steps${steps:+,}$t"; else
      steps="$steps${steps:+,}$max_tables"; break; fi
  done
fi

if [ "${BENCH_NO_BUILD:-0}" != 1 ]; then
  say "building release binaries"
  cargo build --release -p spades-server -p spades-client >&2
fi

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

# start_server PORT: a fresh server with the limits that protect a public
# server out of the way (they would refuse the load generator: one address
# opening thousands of connections and tables a minute).
start_server() {
  local p=$1 binary=${2:-$server_bin}
  SPADES_SERVER__BIND=127.0.0.1:$p \
  SPADES_STORAGE__IN_MEMORY=true \
  SPADES_TABLES__BOT=rule \
  SPADES_LIMITS__MAX_TABLES=1000000 \
  SPADES_LIMITS__MAX_CONNECTIONS=1000000 \
  SPADES_LIMITS__MESSAGES_PER_10S=1000000000 \
  SPADES_LIMITS__TABLES_PER_MINUTE_PER_IP=1000000000 \
  SPADES_LIMITS__CONNECTIONS_PER_MINUTE_PER_IP=1000000000 \
  SPADES_LIMITS__CONNECTIONS_PER_IP=0 \
  SPADES_LIMITS__REQUESTS_PER_MINUTE_PER_IP=0 \
  SPADES_LOG__FILTER=warn \
    "$binary" >"$out/server-$p.log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 1 100); do
    if curl -sf "http://127.0.0.1:$p/healthz" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "the server did not start; see $out/server-$p.log" >&2; cat "$out/server-$p.log" >&2; exit 1
    fi
    sleep 0.1
  done
  echo "the server did not answer on port $p" >&2; exit 1
}

stop() {
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

load=$bin/spades-load

# json_num FILE KEY: the first number after "KEY": in a report.
json_num() { grep -m1 "\"$2\":" "$1" | sed 's/.*: *//; s/,$//'; }

# median_round KIND: copies the round with the median actions per second to
# KIND.json (the summary's input) and prints its number.
median_round() {
  local kind=$1 f pick
  pick=$(for f in "$out/$kind"-[0-9]*.json; do
      [ -f "$f" ] && printf '%s %s\n' "$(json_num "$f" actions_per_s)" "$f"
    done | sort -g | awk '{ f[NR] = $2 } END { if (NR) print f[int((NR + 1) / 2)] }')
  [ -n "$pick" ] || return 0
  cp "$pick" "$out/$kind.json"
  basename "$pick" .json | sed "s/^$kind-//"
}

# The rounds side by side, the ratio of each pair, and which round the
# summary takes.
rounds_report() {
  local r t e tp ep
  printf '\n| round | actions/s | p50 ms | p99 ms | frames/s | echo round trips/s | echo frames/s | echo p99 ms | frames/s share of echo |\n'
  printf '|---|---|---|---|---|---|---|---|---|\n'
  for r in $(seq 1 "$rounds"); do
    t=$out/throughput-$r.json; e=$out/echo-$r.json
    tp=-; ep=-
    [ -f "$t" ] && tp=$(json_num "$t" frames_per_s)
    [ -f "$e" ] && ep=$(json_num "$e" frames_per_s)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$r" \
      "$( [ -f "$t" ] && printf '%.0f' "$(json_num "$t" actions_per_s)" || echo -)" \
      "$( [ -f "$t" ] && json_num "$t" p50 || echo -)" \
      "$( [ -f "$t" ] && json_num "$t" p99 || echo -)" \
      "$( [ "$tp" != - ] && printf '%.0f' "$tp" || echo -)" \
      "$( [ -f "$e" ] && printf '%.0f' "$(json_num "$e" actions_per_s)" || echo -)" \
      "$( [ "$ep" != - ] && printf '%.0f' "$ep" || echo -)" \
      "$( [ -f "$e" ] && json_num "$e" p99 || echo -)" \
      "$( [ "$tp" != - ] && [ "$ep" != - ] && awk -v a="$tp" -v b="$ep" 'BEGIN { printf "%.0f%%", 100 * a / b }' || echo -)"
  done
  printf '\nmedian rounds (used in the summary): throughput %s, echo %s\n' \
    "$(median_round throughput)" "$(median_round echo)"
}
want() { case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs) x $(nproc)"
  echo "kernel: $(uname -r)"
  echo "open files: $fds"
  echo "quick: $quick"
} | tee "$out/machine.txt" >&2

if want memory; then
  say "3. memory: $mem_tables idle tables, then $mem_conns idle connections"
  start_server "$port"
  "$load" memory --url "http://127.0.0.1:$port" --server-pid "$server_pid" \
    --tables "$mem_tables" --connections "$mem_conns" --json-out "$out/memory.json"
  stop "$server_pid"
fi

# throughput_run THINK_MS REPORT: 200 tables on a fresh server.
throughput_run() {
  start_server $((port + 1))
  "$load" run --url "http://127.0.0.1:$((port + 1))" --server-pid "$server_pid" \
    --tables 200 --think-ms "$1" --warmup "$warmup" --duration "$duration" \
    --json-out "$2" || echo "(the throughput run had failures)" >&2
  stop "$server_pid"
}

# echo_run REPORT: the bare tokio-tungstenite echo server under the same
# load as throughput_run (200 tables' worth, think time 0).
echo_run() {
  "$bin/spades-echo" --bind "127.0.0.1:$((port + 2))" 2>"$out/echo-server.log" &
  echo_pid=$!
  pids+=("$echo_pid")
  sleep 0.5
  "$load" run --mode echo --url "ws://127.0.0.1:$((port + 2))/ws" --server-pid "$echo_pid" \
    --tables 200 --think-ms 0 --warmup "$warmup" --duration "$duration" \
    --json-out "$1" || echo "(the echo run had failures)" >&2
  stop "$echo_pid"
}

# Scenarios 2 and 4 run in alternating rounds (throughput, echo, throughput,
# echo, ...), each on a fresh server, so that a slow spell of a shared
# machine falls on both: the summary takes the median round of each and the
# rounds table gives the ratio of every pair.
if want throughput || want echo; then
  for r in $(seq 1 "$rounds"); do
    if want throughput; then
      say "2. throughput, round $r of $rounds: 200 tables, think time 0, ${duration} s"
      throughput_run 0 "$out/throughput-$r.json"
    fi
    if want echo; then
      say "4. raw ceiling, round $r of $rounds: spades-echo under the same load (200 tables' worth, think time 0)"
      echo_run "$out/echo-$r.json"
    fi
  done
  if want throughput; then
    # At think time 0 every table always has a move in flight, so the
    # latency is the queue (200 moves / actions per second); a 4 ms pause
    # shows the latency at a similar rate without that queue. Reported
    # beside the scenario, not instead of it.
    say "2b. throughput: 200 tables, think time 4 ms, ${duration} s"
    throughput_run 4 "$out/throughput-think4.json"
  fi
  rounds_report | tee "$out/rounds.md" >&2
fi

# The lean scenario: the older server (BENCH_BASE_BIN) and this one in
# alternating rounds, each on a fresh server, with the echo ceiling in every
# round: 200 tables at think 0, then a 1 s-think step.
if want lean; then
  base_bin=${BENCH_BASE_BIN:?the lean scenario needs BENCH_BASE_BIN, an older server binary}
  lean_tables=${BENCH_LEAN_TABLES:-2000}
  for r in $(seq 1 "$rounds"); do
    for which in base new; do
      b=$server_bin; [ "$which" = base ] && b=$base_bin
      say "lean, round $r of $rounds: $which server, 200 tables, think time 0, ${duration} s"
      start_server $((port + 1)) "$b"
      "$load" run --url "http://127.0.0.1:$((port + 1))" --server-pid "$server_pid" \
        --tables 200 --think-ms 0 --warmup "$warmup" --duration "$duration" \
        --json-out "$out/lean-$which-think0-$r.json" || echo "(the run had failures)" >&2
      stop "$server_pid"
      say "lean, round $r of $rounds: $which server, $lean_tables tables, think time 1 s, ${hold} s"
      start_server $((port + 1)) "$b"
      "$load" capacity --url "http://127.0.0.1:$((port + 1))" --server-pid "$server_pid" \
        --steps "$lean_tables" --think-ms 1000 --hold "$hold" --settle "$settle" --p99-ms 50 \
        --json-out "$out/lean-$which-think1000-$r.json" || echo "(the step had failures)" >&2
      stop "$server_pid"
    done
    say "lean, round $r of $rounds: echo ceiling"
    echo_run "$out/lean-echo-$r.json"
  done
  "$load" lean --dir "$out" --rounds "$rounds" | tee "$out/lean.md"
  [ "$only" = lean ] && exit 0
fi

if want capacity; then
  say "1. capacity: steps $steps, think time 1 s, each held ${hold} s, p99 limit 50 ms"
  start_server "$port"
  "$load" capacity --url "http://127.0.0.1:$port" --server-pid "$server_pid" \
    --steps "$steps" --think-ms 1000 --hold "$hold" --settle "$settle" --p99-ms 50 \
    --json-out "$out/capacity.json"
  stop "$server_pid"
fi

if want cluster; then
  say "cluster: three nodes on PostgreSQL and NATS (scripts/bench-cluster.sh)"
  BENCH_OUT=$out BENCH_SERVER_BIN=$server_bin BENCH_NO_BUILD=1 "$root/scripts/bench-cluster.sh"
  [ "$only" = cluster ] && exit 0
fi

say "summary (also in $out/summary.md and $out/summary.json)"
"$load" summary --capacity "$out/capacity.json" --throughput "$out/throughput.json" \
  --echo "$out/echo.json" --memory "$out/memory.json" --json-out "$out/summary.json" | tee "$out/summary.md"
