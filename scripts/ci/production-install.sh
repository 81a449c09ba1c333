#!/usr/bin/env bash
# A production install from a clean clone, as the README's "Production" section gives it: `npm ci --omit=dev`
# (and `--ignore-scripts`, then `npm start`, which builds), no dev package installed, a server that starts,
# answers its health checks, takes a client made by the CLI and verifies a number; and NODE_ENV=production with no
# provider refused at start with a message. Run by .ci/run on the commit under test.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/otp-prod-install-XXXXXX)
server_pid=""
# The server runs in a process group of its own (setsid), and is stopped as a group: killing only the shell that
# ran `npm start` left npm and the node server it started running after this script had ended.
stop_server() {
  if [ -n "$server_pid" ]; then
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "production install: FAILED: $*" >&2; exit 1; }
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=process.argv[1].split(".").reduce((o,k)=>o?.[k],JSON.parse(s));if(v===undefined)process.exit(1);console.log(v)})' "$1"; }

try_install() { # name, npm ci flags...
  local name=$1 dir=$work/$1
  shift
  git clone -q "$repo" "$dir"
  (cd "$dir" && npm ci --omit=dev --no-audit --no-fund "$@" >"$dir.npm.log" 2>&1) || { cat "$dir.npm.log" >&2; fail "npm ci $* failed"; }
  for dev in @stoplight/prism-cli twilio better-auth oidc-provider tsx; do
    [ ! -e "$dir/node_modules/$dev" ] || fail "dev package $dev installed by npm ci --omit=dev"
  done
  local port
  port=$(free_port)
  (cd "$dir" && PORT=$port NODE_ENV=development CONSOLE=true exec setsid npm start >"$dir.log" 2>&1) &
  server_pid=$!
  local base=http://127.0.0.1:$port i
  for ((i = 0; i < 240; i++)); do curl -fsS -m 2 "$base/readyz" >/dev/null 2>&1 && break; sleep 0.25; done
  curl -fsS "$base/healthz" >/dev/null || { cat "$dir.log" >&2; fail "$name: the server did not answer /healthz"; }
  curl -fsS "$base/readyz" >/dev/null || fail "$name: /readyz"
  # The console's front end is bundled by the same build (esbuild is a dependency), and served by the service.
  curl -fsS "$base/console" | grep -q '/console/assets/app.js' || fail "$name: /console does not serve the console page"
  curl -fsS -o /dev/null "$base/console/assets/app.js" || fail "$name: the console's bundle was not built"
  local created id secret token vid code status
  created=$(cd "$work" && node "$dir/bin/otp-service.mjs" clients create --name ci --scopes "otp:send otp:verify" --json)
  id=$(json clientId <<<"$created")
  secret=$(json clientSecret <<<"$created")
  token=$(curl -fsS -X POST "$base/oauth/token" -d grant_type=client_credentials -d "client_id=$id" -d "client_secret=$secret" | json accessToken)
  vid=$(curl -fsS -X POST "$base/v1/otp/request" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"phoneNumber":"+14155552671"}' | json data.id)
  code=$(curl -fsS "$base/v1/otp/$vid" -H "Authorization: Bearer $token" | json data.otp)
  status=$(curl -fsS -X POST "$base/v1/otp/verify" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d "{\"id\":\"$vid\",\"otp\":\"$code\"}" | json data.status)
  [ "$status" = SUCCESS ] || fail "$name: verification ended $status"
  stop_server
  echo "production install ($name): npm ci --omit=dev $*, no dev package, started, healthy, console built and served, a CLI client verified a number"
}

try_install plain
try_install no-scripts --ignore-scripts

set +e
refused=$(cd "$work/plain" && NODE_ENV=production DATABASE_URL=postgres://nobody@127.0.0.1:1/none node dist/main.js 2>&1)
code=$?
set -e
[ "$code" = 2 ] || fail "NODE_ENV=production with no provider exited $code, not 2: $refused"
case "$refused" in *"NODE_ENV=production needs a real provider"*) ;; *) fail "no reason given: $refused" ;; esac
echo "production install: NODE_ENV=production with no provider is refused at start, exit 2, with its reason"
