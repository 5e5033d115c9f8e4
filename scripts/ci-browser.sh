#!/usr/bin/env bash
# Makes sure Debian's chromium is at /usr/bin/chromium for the browser e2e test
# (test/browser.e2e-spec.ts drives it with playwright-core). Idempotent: does nothing when it is
# already installed; otherwise installs it with apt (as root, or through sudo).
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "ci-browser: $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium') already installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo -n)
else
  echo "ci-browser: /usr/bin/chromium is missing and this user cannot install it (run: apt-get install -y chromium as root)" >&2
  exit 1
fi

echo "ci-browser: installing chromium with apt"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq chromium
/usr/bin/chromium --version
