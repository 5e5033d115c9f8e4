#!/usr/bin/env bash
# `bash scripts/ci-install.sh <package>`: makes sure Debian's <package> is installed, with its
# program at /usr/bin/<package> (/usr/sbin/pgbouncer), for an e2e test CI must not skip:
#   chromium   — test/browser.e2e-spec.ts drives /usr/bin/chromium with playwright-core;
#   prometheus — test/prometheus.e2e-spec.ts starts /usr/bin/prometheus on a free port with its own
#                scrape config pointing at the service (the package's own service is not used);
#   pgbouncer  — scripts/ci-pgbouncer.sh and test/pooler.e2e-spec.ts start /usr/sbin/pgbouncer on a
#                free port with a configuration of their own (the package's own service is not used).
# Idempotent: does nothing when the program is there; otherwise installs the package with apt (as
# root, or through sudo). Exit 1 when it is missing and cannot be installed.
set -euo pipefail

package="${1:?usage: bash scripts/ci-install.sh <package>   (chromium, prometheus, pgbouncer)}"
program="/usr/bin/$package"
[ "$package" = pgbouncer ] && program=/usr/sbin/pgbouncer

if [ -x "$program" ]; then
  echo "ci-install: $("$program" --version 2>/dev/null | head -n 1 || echo "$package") already installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo -n)
else
  echo "ci-install: $program is missing and this user cannot install it (run: apt-get install -y $package as root)" >&2
  exit 1
fi

echo "ci-install: installing $package with apt"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq "$package"
"$program" --version | head -n 1
