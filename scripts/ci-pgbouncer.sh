#!/usr/bin/env bash
# `DATABASE_URL=postgres://user@127.0.0.1:5432/<db> bash scripts/ci-pgbouncer.sh [test/<file>.e2e-spec.ts …]`:
# runs e2e files on PostgreSQL through a real PgBouncer in transaction mode (Debian's, 1.18: no
# protocol-level prepared statements), as the service runs behind a transaction-mode pooler
# (docs/operations.md#behind-a-connection-pooler): DB_POOLER=transaction, DB_PREPARED_STATEMENTS=false.
# DATABASE_URL names the server and a fresh database (direct, not pooled; the files empty its
# tables). PgBouncer is installed if missing (scripts/ci-install.sh) and started by this script
# on a free port of 127.0.0.1, with its configuration and auth file in a temporary folder
# (pool_mode transaction, auth_type trust, every database forwarded to DATABASE_URL's host and
# port); it is stopped and the folder removed at exit. Nothing of the machine's own PgBouncer
# service is used. Without arguments (about 2-3 minutes): test/pooler.e2e-spec.ts (its own
# PgBouncer in front of a proxy it cuts and stalls: the outage case, 503 within 2 s),
# test/database-faults.e2e-spec.ts (a proxy it cuts between the service and this PgBouncer), lists,
# writes (orders, concurrent writes, todos: a create in a transaction), idempotency, webhooks and login.
# REQUIRE_PGBOUNCER=1 makes that file fail rather than skip without PgBouncer.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${DATABASE_URL:?set DATABASE_URL=postgres://user@host:port/db (direct: the server behind PgBouncer)}"
if [ "$#" -gt 0 ]; then
  files=("$@")
else
  files=(test/pooler.e2e-spec.ts test/database-faults.e2e-spec.ts test/lists.e2e-spec.ts test/orders.e2e-spec.ts test/concurrency-writes.e2e-spec.ts test/idempotency.e2e-spec.ts test/webhooks.e2e-spec.ts test/auth.e2e-spec.ts test/todos.e2e-spec.ts)
fi

bash scripts/ci-install.sh pgbouncer
program=${PGBOUNCER_PATH:-/usr/sbin/pgbouncer}

read -r host port user < <(node -e 'const u = new URL(process.argv[1]); console.log(u.hostname, u.port || 5432, decodeURIComponent(u.username) || "postgres")' "$DATABASE_URL")
listen=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
dir=$(mktemp -d)
cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=$host port=$port
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $listen
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
default_pool_size = 20
max_client_conn = 500
server_login_retry = 1
logfile = $dir/pgbouncer.log
INI
# auth_type = trust still wants the user in the auth file (without a password)
printf '"%s" ""\n' "$user" >"$dir/users.txt"
as_user=()
if [ "$(id -u)" -eq 0 ]; then
  # PgBouncer refuses to run as root
  chown -R nobody "$dir"
  as_user=(-u nobody)
fi
"$program" "${as_user[@]}" "$dir/pgbouncer.ini" >/dev/null 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 50); do
  pg_isready -h 127.0.0.1 -p "$listen" -q && break
  kill -0 "$pid" 2>/dev/null || { cat "$dir/pgbouncer.log" >&2; echo "ci-pgbouncer: pgbouncer exited" >&2; exit 1; }
  sleep 0.2
done
pg_isready -h 127.0.0.1 -p "$listen" -q || { cat "$dir/pgbouncer.log" >&2; echo "ci-pgbouncer: pgbouncer does not listen on $listen" >&2; exit 1; }
pooled=$(node -e 'const u = new URL(process.argv[1]); u.hostname = "127.0.0.1"; u.port = process.argv[2]; console.log(u.toString())' "$DATABASE_URL" "$listen")

echo "== e2e through PgBouncer $("$program" --version | head -n 1 | cut -d' ' -f2) (transaction mode, 127.0.0.1:$listen → $host:$port): ${files[*]}"
DIRECT_DATABASE_URL="$DATABASE_URL" DATABASE_URL="$pooled" DB_POOLER=transaction DB_PREPARED_STATEMENTS=false REQUIRE_PGBOUNCER=1 \
  npm run test:e2e -- "${files[@]}"
