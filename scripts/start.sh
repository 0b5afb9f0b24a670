#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and starts the app on the bundled Adult sample. With no display (no $DISPLAY and
# no Wayland, or Qt asked to draw offscreen, where a window would be invisible and never end), it runs a demo
# release headless through the CLI instead and says where the output went.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${QT_QPA_PLATFORM:-}" != "offscreen" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  exec .venv/bin/ppdp-gui --sample
else
  echo "No display found: running a demo release headless (set DISPLAY or use xvfb-run to see the window)."
  exec .venv/bin/ppdp demo --out out/
fi
