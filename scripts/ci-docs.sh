#!/usr/bin/env bash
# CI step for the OpenAPI documents (valid and linted; one per API version): builds,
# exports openapi.v1.json, openapi.v2.json and openapi.json (the newest), each with its .yaml,
# without starting the HTTP server (in-memory SQLite unless DATABASE_URL is set), validates each
# against the OpenAPI 3.0 schema (@readme/openapi-parser) and lints it with Spectral
# (spectral:oas + OWASP, .spectral.yaml): any error fails the step. Then the checked-in documents
# openapi/v1.json and openapi/v2.json must be byte for byte what the code exports (exported twice
# with default settings, which must agree): on a difference it prints a short diff and the command
# that updates them (npm run docs:snapshot). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== OpenAPI documents (v1, v2): export and check"
# the export must not depend on (or touch) a CI database
env -u DATABASE_URL npm run --silent docs:check

echo "== OpenAPI snapshot: openapi/v1.json and openapi/v2.json are what the code exports"
node scripts/openapi-snapshot.mjs
