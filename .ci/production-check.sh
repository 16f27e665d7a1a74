#!/usr/bin/env bash
# A fresh clone installed as users and the production image install it (no Docker engine here):
#   1. npm ci                                 the lockfile serves every platform (full install)
#   2. npm ci --omit=dev                      then the server starts on Node 24 type stripping,
#                                             embedded engines, and /metrics passes promtool
#   3. npm ci --omit=dev --omit=optional      the image's install: the whole server loads without
#                                             chDB, and embedded mode says what is missing
# Usage: .ci/production-check.sh <node-24-binary>
set -uo pipefail
NODE24=$1
WORK=$(mktemp -d)
SERVER=
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "production check failed: $*"
  exit 1
}

git clone --quiet "$(git rev-parse --show-toplevel)" "$WORK/cairn" || fail "git clone"
cd "$WORK/cairn" || fail "cd"
npm ci --ignore-scripts --no-audit --no-fund >/dev/null ||
  fail "npm ci refused the lockfile of a fresh clone: run \`npm run lockfile\` and commit the result"
echo "npm ci: ok"

npm ci --omit=dev --no-audit --no-fund >/dev/null || fail "npm ci --omit=dev"
PORT=$("$NODE24" -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})')
DATA_DIR="$WORK/data" PORT=$PORT "$NODE24" apps/server/main.ts >"$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/server.log"; fail "the server exited"; }
  sleep 1
done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$WORK/server.log"; fail "no /healthz"; }
curl -sf "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics.txt" || fail "no /metrics"
[ "$(grep -c '^# TYPE' "$WORK/metrics.txt")" -gt 10 ] || fail "/metrics is nearly empty"
promtool check metrics <"$WORK/metrics.txt" || fail "promtool check metrics"
kill "$SERVER" && wait "$SERVER"
SERVER=
echo "npm ci --omit=dev: the server runs on Node $("$NODE24" --version) type stripping; /metrics passes promtool"

npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund >/dev/null || fail "npm ci --omit=optional"
[ ! -e node_modules/chdb ] || fail "chDB installed despite --omit=optional"
"$NODE24" --input-type=module -e "await import('./apps/server/cairn.ts'); await import('./apps/cli/commands/index.ts')" ||
  fail "the server does not load from a production install"
DATA_DIR="$WORK/data2" PORT=0 "$NODE24" apps/server/main.ts >"$WORK/no-chdb.log" 2>&1 && fail "embedded start without chDB succeeded"
grep -q "optional package chdb" "$WORK/no-chdb.log" || { cat "$WORK/no-chdb.log"; fail "no word about chDB"; }
echo "npm ci --omit=dev --omit=optional: $(du -sh node_modules | cut -f1) of node_modules; loads without chDB"
