#!/usr/bin/env bash
# CI step for the OpenAPI documents (valid and linted; one per API version): builds,
# exports openapi.v1.json, openapi.v2.json and openapi.json (the newest), each with its .yaml,
# without starting the HTTP server (in-memory SQLite unless DATABASE_URL is set), validates each
# against the OpenAPI 3.0 schema (@readme/openapi-parser) and lints it with Spectral
# (spectral:oas + OWASP, .spectral.yaml): any error fails the step. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== OpenAPI documents (v1, v2): export and check"
# the export must not depend on (or touch) a CI database
env -u DATABASE_URL npm run --silent docs:check
