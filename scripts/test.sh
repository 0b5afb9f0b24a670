#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the whole test suite headless: import-linter contract, then pytest
# with Qt offscreen, a per-test timeout and an outer timeout. Exits non-zero if any test fails or none ran.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
.venv/bin/lint-imports
set +e
timeout 1800 .venv/bin/python -m pytest -q -p no:cacheprovider --timeout=300 "$@"
rc=$?
set -e
if [ $rc -eq 5 ]; then echo "pytest ran no test: failing"; exit 1; fi
exit $rc
