#!/usr/bin/env bash
# Smoke test of the built bundle (run bash packaging/build.sh first, or pass --build):
#   bash packaging/smoke.sh [--build]
# 1. the command line: `ppdp mechanisms` and `ppdp demo` (DiffGen on the bundled sample, exported);
# 2. the window, offscreen: `ppdp_gui --self-test` opens the bundled sample, runs a release through the worker
#    process, exports it with its release note and quits (gui/self_test.py).
# Prints the bundle's size and start times; exits non-zero if any step fails. Nothing touches your real ledger.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${1:-}" = "--build" ] && bash packaging/build.sh
APP=dist/ppdp_gui
[ -x "$APP/ppdp_gui" ] || { echo "no bundle in $APP: run bash packaging/build.sh"; exit 1; }
out=$(mktemp -d -t ppdp_smoke.XXXXXX)
trap 'rm -rf "$out"' EXIT
export QT_QPA_PLATFORM=offscreen PPDP_LEDGER="$out/ledger.sqlite" XDG_CONFIG_HOME="$out/config"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

echo "bundle: $(du -sh "$APP" | cut -f1) in $(find "$APP" -type f | wc -l) files ($APP)"
t0=$(now); "$APP/ppdp" mechanisms > "$out/mechanisms.txt"; t1=$(now)
grep -q "DiffGen" "$out/mechanisms.txt" || { echo "ppdp mechanisms does not list DiffGen"; exit 1; }
echo "ppdp mechanisms: $(secs "$t0" "$t1") s (start of the command line, cold or warm)"
t0=$(now); "$APP/ppdp" demo --out "$out/demo" > "$out/demo.txt"; t1=$(now)
[ -s "$out/demo/release.csv" ] && [ -s "$out/demo/release-note.json" ] || { cat "$out/demo.txt"; exit 1; }
echo "ppdp demo (DiffGen on the bundled sample, exported): $(secs "$t0" "$t1") s"
PPDP_T0=$(now) "$APP/ppdp_gui" --self-test "$out/window"
echo "smoke test passed"
