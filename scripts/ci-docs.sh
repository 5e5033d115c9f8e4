#!/usr/bin/env bash
# CI step for the OpenAPI document (issue 5, "Valid"): builds, exports openapi.json/openapi.yaml
# without starting the HTTP server (in-memory SQLite unless DATABASE_URL is set), validates it
# against the OpenAPI 3.0 schema (@readme/openapi-parser) and lints it with Spectral
# (spectral:oas + OWASP, .spectral.yaml): any error fails the step. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== OpenAPI document: export and check"
# the export must not depend on (or touch) a CI database
env -u DATABASE_URL npm run --silent docs:check
