#!/usr/bin/env bash
# Makes sure Debian's prometheus is at /usr/bin/prometheus for the Prometheus e2e test
# (test/prometheus.e2e-spec.ts starts it with a scrape config pointing at the service). Idempotent:
# does nothing when it is already installed; otherwise installs it with apt (as root, or through
# sudo). The package's own service is not used: the test starts the binary on a free port.
set -euo pipefail

if [ -x /usr/bin/prometheus ]; then
  echo "ci-prometheus: $(/usr/bin/prometheus --version 2>/dev/null | head -n 1 || echo 'prometheus') already installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo -n)
else
  echo "ci-prometheus: /usr/bin/prometheus is missing and this user cannot install it (run: apt-get install -y prometheus as root)" >&2
  exit 1
fi

echo "ci-prometheus: installing prometheus with apt"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq prometheus
/usr/bin/prometheus --version | head -n 1
