#!/usr/bin/env bash
# make run: bring the whole system up on this machine.
#
# Uses DATABASE_URL / REDIS_URL when they answer; otherwise starts private
# PostgreSQL and Redis instances from the locally installed server binaries,
# with their data under .run/ (git-ignored). Secrets for local use are
# generated once into .run/secrets.env.
#
# A missing PostgreSQL, Redis or ffmpeg is installed with apt-get when this
# runs as root on a system that has it; otherwise the exact command is
# printed. PostgreSQL and Redis are required; ffmpeg is optional: without it
# only audio uploads are disabled, and everything else runs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUN="$ROOT/.run"
mkdir -p "$RUN"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# --- secrets for this machine ------------------------------------------------
if [ ! -f "$RUN/secrets.env" ]; then
  rnd() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }
  cat > "$RUN/secrets.env" <<SECRETS
JWT_SECRET=$(rnd 32)
ENCRYPTION_KEY=$(rnd 32)
BOOTSTRAP_ADMIN_PASSWORD=$(rnd 9)
SECRETS
  chmod 600 "$RUN/secrets.env"
fi
set -a
# shellcheck disable=SC1091
. "$RUN/secrets.env"
set +a
export BOOTSTRAP_ADMIN_EMAIL="${BOOTSTRAP_ADMIN_EMAIL:-admin@wharf.local}"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/wharf?sslmode=disable}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
export STORAGE_DIR="${STORAGE_DIR:-$RUN/storage}"
export HTTP_ADDR="${HTTP_ADDR:-:8080}"

deps() { ./bin/api check-deps 2>/dev/null || true; }

# apt_install PKG: apt-get install it when running as root where apt-get exists;
# fails otherwise (or when the installation fails), so the caller can print
# installcmd PKG instead.
apt_updated=
apt_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
  say "installing $1 with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$apt_updated" ]; then apt-get update -qq >/dev/null || return 1; apt_updated=1; fi
  apt-get install -y -qq "$1" >/dev/null
}
installcmd() {
  if command -v apt-get >/dev/null; then echo "sudo apt-get install $1"; else echo "install $1 with the system's package manager"; fi
}

# --- PostgreSQL --------------------------------------------------------------
PGDIR="$RUN/postgres"   # private cluster: data, socket and log (owned by the server's user)
PGPORT=55432
pgbin() { dirname "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1 || echo /nonexistent/initdb)"; }
asuser=()
[ "$(id -u)" = 0 ] && asuser=(runuser -u postgres --) # initdb refuses to run as root

if [ "${1:-}" = stop ]; then
  [ -f "$PGDIR/data/PG_VERSION" ] && "${asuser[@]}" "$(pgbin)/pg_ctl" -D "$PGDIR/data" stop -m fast || true
  [ -f "$RUN/redis.pid" ] && kill "$(cat "$RUN/redis.pid")" 2>/dev/null || true
  exit 0
fi

if ! deps | grep -q '^postgres: ok'; then
  PGBIN=$(pgbin)
  if [ ! -x "$PGBIN/initdb" ] && apt_install postgresql; then PGBIN=$(pgbin); fi
  if [ ! -x "$PGBIN/initdb" ]; then
    echo "PostgreSQL is not reachable at DATABASE_URL and no server is installed: install it ($(installcmd postgresql)) or set DATABASE_URL." >&2
    exit 1
  fi
  if [ ! -f "$PGDIR/data/PG_VERSION" ]; then
    say "initialising a private PostgreSQL in $PGDIR"
    mkdir -p "$PGDIR/data"
    [ "$(id -u)" = 0 ] && chown -R postgres "$PGDIR"
    "${asuser[@]}" "$PGBIN/initdb" -D "$PGDIR/data" -U postgres --auth=trust >/dev/null
  fi
  if ! "${asuser[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" status >/dev/null 2>&1; then
    say "starting the private PostgreSQL on port $PGPORT"
    "${asuser[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/postgres.log" -w \
      -o "-p $PGPORT -k $PGDIR -c listen_addresses=127.0.0.1" start >/dev/null
  fi
  export DATABASE_URL="postgres://postgres@127.0.0.1:$PGPORT/wharf?sslmode=disable"
fi

# --- Redis -------------------------------------------------------------------
if ! deps | grep -q '^redis: ok'; then
  if ! command -v redis-server >/dev/null && ! apt_install redis-server; then
    echo "Redis is not reachable at REDIS_URL and redis-server is not installed: install it ($(installcmd redis-server)) or set REDIS_URL." >&2
    exit 1
  fi
  say "starting a private Redis on port 56379"
  mkdir -p "$RUN/redis"
  redis-server --port 56379 --bind 127.0.0.1 --daemonize yes --dir "$RUN/redis" \
    --save "" --appendonly no --logfile "$RUN/redis.log" --pidfile "$RUN/redis.pid"
  export REDIS_URL="redis://127.0.0.1:56379/0"
  for _ in $(seq 50); do deps | grep -q '^redis: ok' && break; sleep 0.1; done
fi

# ffmpeg is optional: the api starts without it and answers audio uploads 503.
if ! command -v "${FFMPEG_PATH:-ffmpeg}" >/dev/null && { [ -n "${FFMPEG_PATH:-}" ] || ! apt_install ffmpeg; }; then
  echo "warning: ffmpeg not found (${FFMPEG_PATH:-ffmpeg}): audio uploads are disabled; everything else runs. To enable them: $(installcmd ffmpeg), or set FFMPEG_PATH." >&2
fi

say "migrating $DATABASE_URL"
./bin/api migrate

# --- the provider --------------------------------------------------------------
# Unless PLATFORM_API_URL names a provider, the simulator stands in for it,
# and its webhooks come back to this api.
PORT="${HTTP_ADDR##*:}"
URL="http://localhost:${PORT}"
SIM=
if [ -z "${PLATFORM_API_URL:-}" ]; then
  SIM=1
  export PLATFORMSIM_ADDR="${PLATFORMSIM_ADDR:-127.0.0.1:8090}"
  export PLATFORM_API_URL="http://$PLATFORMSIM_ADDR"
  export PLATFORMSIM_WEBHOOK_URL="http://127.0.0.1:${PORT}/api/webhook"
  export PLATFORMSIM_APP_SECRET="${PLATFORMSIM_APP_SECRET:-sim-app-secret}"
  export PLATFORM_APP_SECRET="$PLATFORMSIM_APP_SECRET"
  # The console's embedded signup loads the simulator's stand-in script
  # (codes queued with POST /_sim/embedded_signup/codes).
  export EMBEDDED_SIGNUP_SCRIPT_URL="${EMBEDDED_SIGNUP_SCRIPT_URL:-$PLATFORM_API_URL/_sim/embedded_signup/sdk.js}"
  export EMBEDDED_SIGNUP_ORIGINS="${EMBEDDED_SIGNUP_ORIGINS:-$PLATFORM_API_URL}"
fi

# --- the processes -----------------------------------------------------------
pids=()
stopping=
cleanup() {
  stopping=1
  trap - INT TERM EXIT
  [ ${#pids[@]} -gt 0 ] && kill -TERM "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup INT TERM EXIT

prefix() { sed -u "s/^/[$1] /"; }
if [ -n "$SIM" ]; then
  ./bin/platformsim > >(prefix platformsim) 2>&1 & pids+=($!)
fi
./bin/api        > >(prefix api) 2>&1 & pids+=($!)
./bin/worker     > >(prefix worker) 2>&1 & pids+=($!)
./bin/scheduler  > >(prefix scheduler) 2>&1 & pids+=($!)
# The callbridge's operator listener must not take the api's HTTP_ADDR.
HTTP_ADDR="${CALLBRIDGE_HTTP_ADDR:-127.0.0.1:8082}" ./bin/callbridge > >(prefix callbridge) 2>&1 & pids+=($!)

for _ in $(seq 100); do ./bin/api healthcheck "$URL/readyz" 2>/dev/null && break; sleep 0.2; done
CONSOLE_NOTE="(sign in with the admin credentials below)"
[ -f api/console/files/app/index.html ] || CONSOLE_NOTE="(not built: see the warning above; the page there says how)"
if [ -n "$SIM" ]; then
  PROVIDER="simulator at $PLATFORM_API_URL (demo account: phone number id 300000000000001, business account 200000000000001, token sim-demo-token)"
else
  PROVIDER="$PLATFORM_API_URL"
fi

cat <<INFO

  Wharf is running.
    Console:    $URL/console/   $CONSOLE_NOTE
    API:        $URL/api   (reference: $URL/api/docs)
    Job queues: $URL/monitoring   (sign in with the admin credentials below)
    Admin:      $BOOTSTRAP_ADMIN_EMAIL / $BOOTSTRAP_ADMIN_PASSWORD
                (created on the first run against an empty database; kept in .run/secrets.env)

  Provider:   $PROVIDER

  Try:  curl -s $URL/api/auth/login -d '{"email":"$BOOTSTRAP_ADMIN_EMAIL","password":"$BOOTSTRAP_ADMIN_PASSWORD"}'
        and README.md's "Send a first message".
  Stop with Ctrl-C.

INFO
wait -n "${pids[@]}" || true
if [ -n "$stopping" ]; then exit 0; fi # stopped by Ctrl-C or SIGTERM
echo "a process exited; stopping the others" >&2
exit 1
