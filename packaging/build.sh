#!/usr/bin/env bash
# Builds the self-contained application folder dist/ppdp_gui/ with PyInstaller (packaging/ppdp_gui.spec):
# `ppdp_gui` (the window) and `ppdp` (the command line) with Python, Qt and every library inside.
#   bash packaging/build.sh            (uses .venv/bin/python, or $PYTHON; installs the `bundle` extra if missing)
# Then: bash packaging/smoke.sh        (starts the bundle offscreen, makes and exports a release, prints figures)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
if ! "$PY" -c "import PyInstaller" >/dev/null 2>&1; then
  echo "Installing PyInstaller (the project's 'bundle' extra)..."
  "$PY" -m pip install -q -e ".[bundle]"
fi
start=$(date +%s)
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller \
  packaging/ppdp_gui.spec
echo "built dist/ppdp_gui/ in $(( $(date +%s) - start )) s: $(du -sh dist/ppdp_gui | cut -f1)" \
  "($(find dist/ppdp_gui -type f | wc -l) files)"
