#!/usr/bin/env bash
# Runs the image that build-local.sh made (or IMAGE) with podman and checks what a user of it relies on:
#   1. on the embedded database, in a named volume at /data, its port published on 127.0.0.1: /healthz answers,
#      the image's health check passes (podman healthcheck run), the process runs as uid 10001, the CLI inside
#      the container creates a client, that client gets a token and a verification goes from request to
#      verified; podman stop (SIGTERM) ends it well within the grace time, exit code 0;
#   2. the volume keeps the data: a second container on it lists that client (the CLI without a server);
#   3. on PostgreSQL (when initdb and pg_ctl are installed, Debian's postgresql): a one-off container runs
#      the CLI against it (what `docker compose run --rm otp-service node bin/otp-service.mjs ...` does), and
#      the server answers /readyz on it.
# Runs as root with the packages named in build-local.sh's header, and curl and node on the host.
#
# This machine's limits, handled here (docs/container.md, "What was run here"):
#   - crun, bookworm's default runtime, refuses hosts with cgroups in hybrid mode that have a controller in
#     cgroup v2; runc is used when installed (OCI_RUNTIME);
#   - podman asks for RLIMIT_NOFILE 1048576 by default (and RLIMIT_NPROC 1048576 once nofile is given), and
#     raising a hard limit needs CAP_SYS_RESOURCE: both are set at or below this machine's hard limits (--ulimit);
#   - podman runs a health check on a systemd timer; without systemd it never runs on its own, so it is run
#     here with `podman healthcheck run`.
set -euo pipefail

IMAGE=${IMAGE:-localhost/otp-service:dev}
HOST_PORT=${HOST_PORT:-38080}
PG_PORT=${PG_PORT:-38432}
PG_HTTP_PORT=${PG_HTTP_PORT:-38081}
OCI_RUNTIME=${OCI_RUNTIME:-$(command -v runc || true)}
name=otp-smoke-$$
volume=otp-smoke-data-$$
pg_dir=""
nofile=$(ulimit -Hn)
if [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ]; then nofile=65536; fi
podman_run=(podman ${OCI_RUNTIME:+--runtime "$OCI_RUNTIME"} run --ulimit "nofile=$nofile:$nofile" --ulimit nproc=4096:4096)

# podman without systemd logs an error about the health check's timer at every start and stop; it is noise here.
quiet() { grep -v 'systemd' || true; }
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=process.argv[1].split(".").reduce((o,k)=>o?.[k],JSON.parse(s));if(v===undefined)process.exit(1);console.log(typeof v==="string"?v:JSON.stringify(v))})' "$1"; }
cleanup() {
  local c
  for c in "$name" "$name-pg"; do podman rm -f -v -t 0 "$c" >/dev/null 2>&1 || true; done
  podman volume rm -f "$volume" >/dev/null 2>&1 || true
  if [ -n "$pg_dir" ]; then
    runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$pg_dir"
  fi
}
trap cleanup EXIT
wait_for() { # url seconds
  local i
  for ((i = 0; i < $2 * 4; i++)); do
    curl -fsS -m 2 "$1" >/dev/null 2>&1 && return 0
    sleep 0.25
  done
  return 1
}

echo "== $IMAGE refuses to start in production (its default NODE_ENV) with no provider"
refused=$("${podman_run[@]}" --rm "$IMAGE" 2>&1 || true)
case "$refused" in *"NODE_ENV=production needs a real provider"*) ;; *) fail "the image started without a provider: $refused" ;; esac
ok "no provider in production: refused at start"

# The rest tries the image as a newcomer would before choosing a provider: NODE_ENV=development, log providers.
echo "== $IMAGE on the embedded database, volume $volume at /data, 127.0.0.1:$HOST_PORT"
"${podman_run[@]}" -d --name "$name" -e NODE_ENV=development -v "$volume:/data" -p "127.0.0.1:$HOST_PORT:3000" "$IMAGE" 2>&1 | quiet >/dev/null
started=$SECONDS
wait_for "http://127.0.0.1:$HOST_PORT/healthz" 60 || { podman logs "$name" >&2; fail "/healthz did not answer in 60 s"; }
ok "/healthz answers through the published port after $((SECONDS - started)) s: $(curl -fsS "http://127.0.0.1:$HOST_PORT/healthz")"

user=$(podman inspect "$name" --format '{{.Config.User}}')
[ "$user" = 10001:10001 ] || fail "image user is '$user', not 10001:10001"
uid=$(podman exec "$name" sh -c 'grep ^Uid: /proc/1/status' | awk '{print $2}')
[ "$uid" = 10001 ] || fail "the server (pid 1) runs as uid $uid"
ok "runs as $user; pid 1's uid is $uid"
health=$(podman inspect "$name" --format '{{json .Config.Healthcheck.Test}}')
case "$health" in *"/healthz"*) ;; *) fail "no health check on /healthz: $health" ;; esac
podman healthcheck run "$name" 2>&1 | quiet
status=$(podman inspect "$name" --format '{{.State.Health.Status}}')
[ "$status" = healthy ] || fail "health status is '$status'"
ok "health check $health: $status"

created=$(podman exec "$name" node bin/otp-service.mjs clients create --name smoke --scopes "otp:send otp:verify" --json)
client_id=$(json clientId <<<"$created")
client_secret=$(json clientSecret <<<"$created")
ok "the CLI in the container created client $client_id (through the running server's admin socket)"

base=http://127.0.0.1:$HOST_PORT
token=$(curl -fsS -X POST "$base/oauth/token" -d grant_type=client_credentials -d "client_id=$client_id" \
  -d "client_secret=$client_secret" -d scope="otp:send otp:verify" | json accessToken)
id=$(curl -fsS -X POST "$base/v1/otp/request" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"countryCode":"+234","phoneNumber":"08012345678"}' | json data.id)
code=$(curl -fsS "$base/v1/otp/$id" -H "Authorization: Bearer $token" | json data.otp)
verified=$(curl -fsS -X POST "$base/v1/otp/verify" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d "{\"id\":\"$id\",\"otp\":\"$code\"}" | json data.status)
[ "$verified" = SUCCESS ] || fail "verification $id is $verified"
ok "token, verification $id requested and verified: $verified"

stop_started=$(date +%s%N)
podman stop -t 15 "$name" 2>&1 | quiet >/dev/null
stop_ms=$((($(date +%s%N) - stop_started) / 1000000))
exit_code=$(podman inspect "$name" --format '{{.State.ExitCode}}')
[ "$exit_code" = 0 ] || fail "exit code $exit_code after podman stop (137 is SIGKILL: SIGTERM was not handled in 15 s)"
podman logs "$name" 2>&1 | grep -q '"signal":"SIGTERM"' || fail "the log does not show the SIGTERM shutdown"
ok "podman stop: SIGTERM, exit code 0 after $stop_ms ms"
podman rm -v "$name" 2>&1 | quiet >/dev/null

listed=$("${podman_run[@]}" --rm -e NODE_ENV=development -v "$volume:/data" "$IMAGE" node bin/otp-service.mjs clients list --json 2>&1 | quiet)
case "$listed" in *"$client_id"*) ;; *) fail "a new container on $volume does not list $client_id: $listed" ;; esac
ok "a new container on the same volume lists client $client_id"

pg_bin=""
for dir in /usr/lib/postgresql/17/bin /usr/lib/postgresql/16/bin /usr/lib/postgresql/15/bin; do
  [ -x "$dir/initdb" ] && { pg_bin=$dir; break; }
done
if [ -z "$pg_bin" ] || ! id postgres >/dev/null 2>&1; then
  echo "skipped: PostgreSQL (no initdb under /usr/lib/postgresql or no postgres user: apt-get install postgresql)"
  exit 0
fi
echo "== $IMAGE on PostgreSQL ($("$pg_bin/postgres" --version)) on 127.0.0.1:$PG_PORT, --network host"
pg_dir=$(mktemp -d /tmp/otp-smoke-pg-XXXXXX)
chown postgres: "$pg_dir"
runuser -u postgres -- "$pg_bin/initdb" -D "$pg_dir/data" -U otp --auth=trust -E UTF8 --no-locale >/dev/null
printf "listen_addresses = '127.0.0.1'\nport = %s\nunix_socket_directories = '%s'\n" "$PG_PORT" "$pg_dir" >>"$pg_dir/data/postgresql.conf"
runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w start >/dev/null
runuser -u postgres -- "$pg_bin/createdb" -h "$pg_dir" -p "$PG_PORT" -U otp otp
db_url=postgres://otp@127.0.0.1:$PG_PORT/otp

created=$("${podman_run[@]}" --rm --network host -e NODE_ENV=development -e "DATABASE_URL=$db_url" "$IMAGE" \
  node bin/otp-service.mjs clients create --name smoke-pg --scopes "otp:send otp:verify" --json 2>&1 | quiet)
pg_client=$(json clientId <<<"$created") || fail "the CLI on PostgreSQL printed: $created"
ok "a one-off container's CLI migrated PostgreSQL and created client $pg_client"
"${podman_run[@]}" -d --name "$name-pg" --network host -e NODE_ENV=development -e "DATABASE_URL=$db_url" -e "PORT=$PG_HTTP_PORT" "$IMAGE" 2>&1 | quiet >/dev/null
wait_for "http://127.0.0.1:$PG_HTTP_PORT/readyz" 60 || { podman logs "$name-pg" >&2; fail "/readyz on PostgreSQL did not answer 200 in 60 s"; }
ok "the server on PostgreSQL: /readyz $(curl -fsS "http://127.0.0.1:$PG_HTTP_PORT/readyz")"
podman healthcheck run "$name-pg" 2>&1 | quiet
ok "health check on PostgreSQL: $(podman inspect "$name-pg" --format '{{.State.Health.Status}}')"
stop_started=$(date +%s%N)
podman stop -t 15 "$name-pg" 2>&1 | quiet >/dev/null
stop_ms=$((($(date +%s%N) - stop_started) / 1000000))
exit_code=$(podman inspect "$name-pg" --format '{{.State.ExitCode}}')
[ "$exit_code" = 0 ] || fail "exit code $exit_code after podman stop on PostgreSQL"
ok "podman stop on PostgreSQL: exit code 0 after $stop_ms ms"
echo "all checks passed"
