#!/usr/bin/env bash
# Release gate: block a release unless every tlcheck obligation holds and
# the certificates it writes verify. Exit status is tlcheck's: 0 holds,
# 1 an obligation failed, 2 bad input or usage.
#
#   ci/gate.sh [OUT_DIR]    (default: tlcheck-certs; JUnit XML at OUT_DIR.junit.xml)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-tlcheck-certs}"
go build -o "${TLCHECK_BIN:-./tlcheck}" ./cmd/tlcheck
"${TLCHECK_BIN:-./tlcheck}" gate --out "$out" --junit "$out.junit.xml"
# The certificates left behind must verify on their own.
"${TLCHECK_BIN:-./tlcheck}" verify "$out" > /dev/null
echo "release gate: passed; certificates in $out"
