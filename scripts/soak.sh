#!/usr/bin/env bash
# The Spades server's soak run: a bounded churn against a real server that
# the driver (spades-soak) starts, kills and restarts.
#
#   scripts/soak.sh                               # about 3 minutes of churn
#   SOAK_SECS=60 SOAK_NO_BUILD=1 scripts/soak.sh  # a short run on built binaries
#
# Builds the release binaries (unless SOAK_NO_BUILD=1), then runs
# spades-soak: tables created and played to their end (all bots, or one to
# four library clients playing legal moves), client connections dropped and
# resumed, spectators coming and going, REST floods, and the server killed
# (SIGKILL, and SIGTERM every other time) and restarted on the same port
# and SQLite data directory. The driver checks that no acknowledged action
# is lost, that no table stalls past its clock plus a slack, that view seq
# never goes back, that no spectator sees a hand, and that the server's open
# files and memory stay flat; it exits non-zero when any check fails.
# Figures go to stdout and to $SOAK_OUT/soak.json (default target/soak),
# with the server's log in $SOAK_OUT/server.log. See docs/reliability.md.
#
# Settings (environment):
#   SOAK_SECS=180          seconds of churn (the running matches then finish,
#                          up to SOAK_WIND_DOWN seconds more)
#   SOAK_WIND_DOWN=60      seconds allowed for the last matches to finish
#   SOAK_TABLES=10         tables in play at once
#   SOAK_KILLS=0           kills and restarts (0: one per 30 s, at least 2)
#   SOAK_FLOOD=2000        REST requests in flight during a flood
#   SOAK_PORT=18500        the server's port on 127.0.0.1
#   SOAK_OUT=dir           reports, server log and data directory
#   SOAK_SEED=n            the driver's seed (default: from the clock)
#   SOAK_SERVER_BIN=path   a server binary other than target/release/spades-server
#   SOAK_NO_BUILD=1        use the binaries already built
#   SOAK_PROFILE=debug     use (and build) the debug binaries instead (CI's
#                          short run)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

out=${SOAK_OUT:-$root/target/soak}
profile=${SOAK_PROFILE:-release}
bin=$root/target/$profile
server_bin=${SOAK_SERVER_BIN:-$bin/spades-server}
mkdir -p "$out"

if [ "${SOAK_NO_BUILD:-0}" != 1 ]; then
  printf '\n== building %s binaries\n' "$profile" >&2
  if [ "$profile" = release ]; then
    cargo build --release -p spades-server -p spades-client >&2
  else
    cargo build -p spades-server -p spades-client >&2
  fi
fi
for b in "$server_bin" "$bin/spades-soak"; do
  [ -x "$b" ] || { echo "no binary at $b: build first or unset SOAK_NO_BUILD" >&2; exit 1; }
done

# A flood keeps thousands of connections open in the driver and the server.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs) x $(nproc)"
  echo "kernel: $(uname -r)"
  echo "open files: $(ulimit -n)"
} | tee "$out/machine.txt" >&2

args=(--server-bin "$server_bin" --out "$out"
  --secs "${SOAK_SECS:-180}" --wind-down "${SOAK_WIND_DOWN:-60}"
  --tables "${SOAK_TABLES:-10}" --kills "${SOAK_KILLS:-0}"
  --flood-inflight "${SOAK_FLOOD:-2000}" --port "${SOAK_PORT:-18500}")
if [ -n "${SOAK_SEED:-}" ]; then args+=(--seed "$SOAK_SEED"); fi

printf '\n== soak: %s s of churn\n' "${SOAK_SECS:-180}" >&2
# The driver reads SOAK_SECS itself too; pass everything explicitly.
env -u SOAK_SECS "$bin/spades-soak" "${args[@]}" | tee "$out/summary.md"
