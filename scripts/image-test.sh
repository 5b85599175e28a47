#!/usr/bin/env bash
# Tests the container image for real, where no image registry is reachable.
#
# Makes a Debian bookworm base with debootstrap (cached in
# target/image-test/, so later runs reuse it), builds docker/Dockerfile's
# runtime stage on it with the server binary built on the host, then, with
# SQLite in a fresh named volume and again with PostgreSQL (a throw-away
# database on the host's server, host networking): waits for the container's
# HEALTHCHECK to pass, plays a bots-only match over REST and the WebSocket,
# checks the match record, restarts the container and checks the record
# survived, and stops it with `docker stop` (exit 0 within the grace, "stopped"
# logged). Everything it made (containers, volumes, images, the database) is
# removed at the end; any failure exits non-zero with a message. With
# docker-compose installed it also checks that docker/compose.yaml is refused
# without POSTGRES_PASSWORD and valid with docker/.env.example (compose itself
# is not run: its postgres image cannot be pulled here).
#
# Needs root (debootstrap; dockerd is started if `docker info` fails),
# debootstrap, docker (Debian's docker.io), python3 and psql. Settings:
#   IMAGE_TEST_PG        PostgreSQL server (default postgres://postgres@127.0.0.1:5432)
#   IMAGE_TEST_MIRROR    Debian mirror for debootstrap (default http://deb.debian.org/debian)
#   IMAGE_TEST_PROFILE   cargo profile of the binary (default release)
#   IMAGE_TEST_BINARY    a spades-server binary already built (skips cargo)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$ROOT/target/image-test
PG=${IMAGE_TEST_PG:-postgres://postgres@127.0.0.1:5432}
MIRROR=${IMAGE_TEST_MIRROR:-http://deb.debian.org/debian}
PROFILE=${IMAGE_TEST_PROFILE:-release}
ID=spades-image-test-$$
BASE_IMAGE=$ID-base:bookworm
BINARY_IMAGE=$ID-binary:latest
IMAGE=$ID:latest
VOLUME=$ID-data
DATABASE=spades_image_test_$$
GRACE=30 # docker stop's grace: longer than the production shutdown_grace_secs (20)
STARTED_DOCKERD=
CONTAINERS=()
SECONDS=0

say() { echo "image-test: $*"; }
fail() {
    echo "image-test: FAIL: $*" >&2
    exit 1
}

cleanup() {
    local rc=$?
    set +e
    for c in "${CONTAINERS[@]}"; do
        if [ "$rc" -ne 0 ] && docker inspect "$c" > /dev/null 2>&1; then
            echo "image-test: last log lines of $c:" >&2
            docker logs --tail 30 "$c" 2>&1 | sed 's/^/    /' >&2
        fi
        docker rm -f -v "$c" > /dev/null 2>&1
    done
    docker volume rm "$VOLUME" > /dev/null 2>&1
    docker rmi "$IMAGE" "$BINARY_IMAGE" "$BASE_IMAGE" > /dev/null 2>&1
    psql "$PG/postgres" -q -c "DROP DATABASE IF EXISTS $DATABASE WITH (FORCE)" > /dev/null 2>&1
    [ -n "${TMP:-}" ] && rm -rf "$TMP"
    if [ -n "$STARTED_DOCKERD" ]; then
        kill "$STARTED_DOCKERD" 2> /dev/null
        wait "$STARTED_DOCKERD" 2> /dev/null
    fi
    if [ "$rc" -eq 0 ]; then
        say "passed in ${SECONDS}s"
    else
        echo "image-test: failed after ${SECONDS}s" >&2
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in docker debootstrap python3 psql cargo; do
    command -v "$tool" > /dev/null || fail "$tool is missing (apt-get install docker.io debootstrap python3 postgresql-client)"
done
[ "$(id -u)" -eq 0 ] || fail "run as root (debootstrap and dockerd need it)"
TMP=$(mktemp -d)
mkdir -p "$WORK"

# The compose file: refused without a password, valid with the example's.
if command -v docker-compose > /dev/null; then
    : > "$TMP/empty.env"
    if env -u POSTGRES_PASSWORD docker-compose --env-file "$TMP/empty.env" -f docker/compose.yaml config -q > /dev/null 2>&1; then
        fail "docker/compose.yaml is accepted without POSTGRES_PASSWORD"
    fi
    env -u POSTGRES_PASSWORD docker-compose --env-file docker/.env.example -f docker/compose.yaml config -q \
        || fail "docker/compose.yaml is invalid with docker/.env.example"
fi

# The Docker engine.
if ! docker info > /dev/null 2>&1; then
    command -v dockerd > /dev/null || fail "no Docker engine answers and dockerd is missing"
    say "starting dockerd"
    dockerd > "$WORK/dockerd.log" 2>&1 &
    STARTED_DOCKERD=$!
    for _ in $(seq 60); do
        docker info > /dev/null 2>&1 && break
        sleep 0.5
    done
    docker info > /dev/null 2>&1 || fail "dockerd did not start (see $WORK/dockerd.log)"
fi

# A client that builds with BuildKit, which skips the stages the runtime
# stage does not use (the Rust toolchain image is out of reach): buildx, or
# a pre-23 client's built-in BuildKit (Debian's /usr/bin/docker).
if docker buildx version > /dev/null 2>&1; then
    build() { docker build "$@"; }
else
    BUILDER=
    for client in docker /usr/bin/docker; do
        major=$("$client" version --format '{{.Client.Version}}' 2> /dev/null | cut -d. -f1)
        if [ -n "$major" ] && [ "$major" -lt 23 ]; then
            BUILDER=$client
            break
        fi
    done
    [ -n "$BUILDER" ] || fail "no Docker client builds with BuildKit here (install docker-buildx or Debian's docker.io client)"
    build() { DOCKER_BUILDKIT=1 "$BUILDER" build "$@"; }
fi

# The base: Debian bookworm (minbase), made once and cached.
if [ ! -s "$WORK/bookworm-minbase.tar" ]; then
    say "making a Debian bookworm base with debootstrap (cached in $WORK)"
    rm -rf "$WORK/rootfs.tmp"
    timeout 900 debootstrap --variant=minbase bookworm "$WORK/rootfs.tmp" "$MIRROR" > "$WORK/debootstrap.log" 2>&1 \
        || fail "debootstrap failed (see $WORK/debootstrap.log)"
    rm -rf "$WORK"/rootfs.tmp/var/cache/apt/archives/*.deb "$WORK"/rootfs.tmp/var/lib/apt/lists/*
    tar -C "$WORK/rootfs.tmp" -cf "$WORK/bookworm-minbase.tar.tmp" .
    mv "$WORK/bookworm-minbase.tar.tmp" "$WORK/bookworm-minbase.tar"
    rm -rf "$WORK/rootfs.tmp"
fi
docker import "$WORK/bookworm-minbase.tar" "$BASE_IMAGE" > /dev/null

# The binary, built on the host, wrapped in an image where the runtime stage
# expects the builder's output.
BINARY=${IMAGE_TEST_BINARY:-}
if [ -z "$BINARY" ]; then
    say "building spades-server ($PROFILE)"
    timeout 1800 cargo build --locked --profile "$PROFILE" -p spades-server -q || fail "cargo build failed"
    dir=$PROFILE
    [ "$PROFILE" = dev ] && dir=debug
    BINARY=$ROOT/target/$dir/spades-server
fi
[ -x "$BINARY" ] || fail "$BINARY is not an executable"
mkdir -p "$TMP/binary"
cp "$BINARY" "$TMP/binary/spades-server"
printf 'FROM scratch\nCOPY spades-server /app/target/release/spades-server\n' > "$TMP/binary/Dockerfile"
build -q -t "$BINARY_IMAGE" "$TMP/binary" > /dev/null || fail "wrapping the binary in an image failed"

say "building docker/Dockerfile's runtime stage"
build -q -f docker/Dockerfile --target runtime \
    --build-arg RUNTIME_BASE="$BASE_IMAGE" --build-arg SERVER_BINARY_FROM="$BINARY_IMAGE" \
    -t "$IMAGE" "$ROOT" > /dev/null || fail "building the runtime stage failed"

owner=$(docker run --rm --entrypoint stat "$IMAGE" -c '%u:%g' /var/lib/spades/data)
[ "$owner" = 10001:10001 ] || fail "/var/lib/spades/data belongs to $owner, not the server's user 10001"
user=$(docker inspect -f '{{.Config.User}}' "$IMAGE")
[ "$user" = spades:spades ] || fail "the image runs as '$user'"
docker run --rm --entrypoint cat "$IMAGE" /etc/spades/config.toml | cmp -s - config/production.toml \
    || fail "the image's /etc/spades/config.toml is not config/production.toml"

cat > "$TMP/match.py" <<'PY'
"""Plays a bots-only match over REST and a minimal WebSocket client
(standard library only) and checks its record; or checks a saved record."""
import base64, json, os, socket, struct, sys, time, urllib.error, urllib.request
from urllib.parse import urlparse


def fail(msg):
    print(f"image-test: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def http(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


class Ws:
    def __init__(self, base):
        u = urlparse(base)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=15)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (f"GET /ws HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
             f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                fail("the WebSocket handshake was cut off")
            head += chunk
        if not head.startswith(b"HTTP/1.1 101"):
            fail(f"WebSocket upgrade refused: {head.splitlines()[0]!r}")

    def exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                fail("the WebSocket connection closed")
            buf += chunk
        return buf

    def send(self, obj):
        payload = json.dumps(obj).encode()
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def recv(self):
        while True:
            b0, b1 = self.exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self.exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self.exact(8))[0]
            payload = self.exact(n)
            if b0 & 0x0F == 1:
                return json.loads(payload)
            if b0 & 0x0F == 8:
                fail(f"the server closed the WebSocket: {payload!r}")

    def until(self, kind, req):
        while True:
            msg = self.recv()
            if msg.get("type") == "error":
                fail(f"the server refused request {req}: {msg}")
            if msg.get("type") == kind and msg.get("req") == req:
                return msg


def check_record(base, table, hands):
    status, record = http(base, "GET", f"/api/v1/matches/{table}")
    if status != 200:
        fail(f"GET /api/v1/matches/{table} answered {status}: {record}")
    if record.get("seed") is None or len(record.get("hands", [])) != hands:
        fail(f"the match record lacks the seed or its {hands} hands: {json.dumps(record)[:300]}")
    status, listing = http(base, "GET", "/api/v1/matches")
    if status != 200 or table not in json.dumps(listing):
        fail(f"GET /api/v1/matches ({status}) does not list match {table}")
    return record


def play(base, record_file, hands):
    status, created = http(base, "POST", "/api/v1/tables",
                           {"name": "Image test", "options": {"rules": {"match_end": {"hands": hands}}}})
    if status != 201:
        fail(f"POST /api/v1/tables answered {status}: {created}")
    table, owner = created["table"], created["owner_token"]
    ws = Ws(base)
    if ws.recv().get("type") != "hello":
        fail("no hello on the WebSocket")
    ws.send({"type": "watch", "req": 1, "table": table, "protocol": 2})
    ws.until("watching", 1)
    ws.send({"type": "add_bots", "req": 2, "owner_token": owner})
    ws.until("ack", 2)
    ws.send({"type": "start", "req": 3, "owner_token": owner})
    ws.until("ack", 3)
    ws.sock.close()
    deadline = time.monotonic() + 300
    while True:
        status, view = http(base, "GET", f"/api/v1/tables/{table}")
        if status != 200:
            fail(f"GET /api/v1/tables/{table} answered {status}: {view}")
        if view.get("result") is not None:
            break
        if time.monotonic() > deadline:
            fail(f"the match did not end in 300 s (phase {view.get('phase')}, {len(view.get('hands', []))} hands)")
        time.sleep(1)
    if len(view["hands"]) != hands or view.get("seed") is None:
        fail(f"the finished match has {len(view['hands'])} hands (expected {hands}) and seed {view.get('seed')}")
    record = check_record(base, table, hands)
    with open(record_file, "w") as f:
        json.dump({"table": table, "record": record}, f)
    print(f"image-test: match {table} played to the end ({hands} hands)")


def survived(base, record_file):
    with open(record_file) as f:
        saved = json.load(f)
    record = check_record(base, saved["table"], len(saved["record"]["hands"]))
    if record != saved["record"]:
        fail(f"match {saved['table']}'s record changed across the restart")
    print(f"image-test: match {saved['table']} survived the restart")


if __name__ == "__main__":
    mode, base, record_file = sys.argv[1:4]
    if mode == "play":
        play(base, record_file, int(sys.argv[4]))
    else:
        survived(base, record_file)
PY

wait_healthy() {
    local c=$1 state
    for _ in $(seq 120); do
        state=$(docker inspect -f '{{.State.Status}} {{.State.Health.Status}}' "$c")
        case $state in
            "running healthy") return 0 ;;
            running*) sleep 0.5 ;;
            *) fail "$c is $state" ;;
        esac
    done
    fail "$c was not healthy within 60 s ($state)"
}

stop_gracefully() {
    local c=$1 started elapsed code logs
    started=$SECONDS
    timeout $((GRACE + 15)) docker stop -t "$GRACE" "$c" > /dev/null || fail "docker stop $c failed"
    elapsed=$((SECONDS - started))
    code=$(docker inspect -f '{{.State.ExitCode}}' "$c")
    [ "$code" = 0 ] || fail "$c exited with $code on docker stop (after ${elapsed}s)"
    [ "$elapsed" -lt "$GRACE" ] || fail "$c took ${elapsed}s to stop (the grace is ${GRACE}s)"
    logs=$(docker logs "$c" 2>&1 | tail -n 5)
    grep -q '"message":"stopped"' <<< "$logs" || fail "$c did not log that it stopped"
    say "$c stopped gracefully in ${elapsed}s"
}

# One run: the container $1 serving on $2; $3 names the store the log must report.
exercise() {
    local c=$1 base=$2 store=$3
    wait_healthy "$c"
    local logs
    logs=$(docker logs "$c" 2>&1)
    grep -q "\"store\":\"$store\"" <<< "$logs" || fail "$c does not keep its matches in $store"
    timeout 360 python3 "$TMP/match.py" play "$base" "$TMP/$c.json" 5
    timeout $((GRACE + 15)) docker restart -t "$GRACE" "$c" > /dev/null || fail "docker restart $c failed"
    wait_healthy "$c"
    timeout 60 python3 "$TMP/match.py" survived "$base" "$TMP/$c.json"
    stop_gracefully "$c"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Fast bots, so that a five-hand match takes seconds; and the restrictions
# docker/compose.yaml puts on the server (read-only root, no capabilities).
RUN_OPTS=(-e SPADES_TABLES__BOT_DELAY_MS=0 --read-only --cap-drop ALL --security-opt no-new-privileges:true)

say "SQLite in a fresh named volume"
docker volume create "$VOLUME" > /dev/null
port=$(free_port)
CONTAINERS+=("$ID-sqlite")
docker run -d --name "$ID-sqlite" "${RUN_OPTS[@]}" -v "$VOLUME:/var/lib/spades/data" -p "127.0.0.1:$port:8080" "$IMAGE" > /dev/null
exercise "$ID-sqlite" "http://127.0.0.1:$port" sqlite
files=$(docker run --rm -v "$VOLUME:/var/lib/spades/data" --entrypoint ls "$IMAGE" /var/lib/spades/data)
grep -qx spades.db <<< "$files" \
    || fail "the volume holds no spades.db"

say "PostgreSQL at ${PG#*@}"
psql "$PG/postgres" -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE $DATABASE" > /dev/null || fail "cannot create a database at ${PG#*@}"
port=$(free_port)
CONTAINERS+=("$ID-postgres")
docker run -d --name "$ID-postgres" "${RUN_OPTS[@]}" --network host \
    -e SPADES_SERVER__BIND="127.0.0.1:$port" -e SPADES_STORAGE__DATABASE_URL="$PG/$DATABASE" \
    "$IMAGE" > /dev/null
exercise "$ID-postgres" "http://127.0.0.1:$port" postgres
matches=$(psql "$PG/$DATABASE" -tAc "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
[ "$matches" -gt 0 ] || fail "the server made no tables in $DATABASE"
