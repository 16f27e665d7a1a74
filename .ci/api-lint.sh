#!/usr/bin/env bash
# Lints the API document the server serves, built from the route table without starting a
# server: Spectral (spectral:oas, .spectral.yaml) and Redocly (recommended, redocly.yaml).
# Fails on any error from either; warnings are printed and pass. Both rule sets ship inside the
# installed packages: nothing is fetched, and Redocly's telemetry and update check stay off.
set -euo pipefail
cd "$(dirname "$0")/.."

export REDOCLY_TELEMETRY=off
export REDOCLY_SUPPRESS_UPDATE_NOTICE=true
export NO_UPDATE_NOTIFIER=1

doc="$(mktemp -d)/openapi.json"
trap 'rm -rf "$(dirname "$doc")"' EXIT
npx --no-install tsx dev-tools/write-openapi.ts "$doc"

status=0
echo "== spectral lint ($doc)"
npx --no-install spectral lint --ruleset .spectral.yaml --fail-severity error "$doc" || status=1
echo "== redocly lint ($doc)"
npx --no-install redocly lint --config redocly.yaml --format stylish "$doc" || status=1
exit "$status"
