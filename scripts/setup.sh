#!/usr/bin/env bash
# Installs what the app and its tests need on a fresh Debian/Ubuntu machine: Qt's system libraries and fonts
# (apt, when run as root or with sudo) and a Java runtime for Spark, then a virtualenv in .venv with the project,
# its test extras and the Spark extra (pyspark, sqlglot). Every step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
QT_PKGS="libglib2.0-0 libgl1 libegl1 libx11-6 libdbus-1-3 libfontconfig1 libfreetype6 libxkbcommon0 fonts-dejavu-core
 xvfb xauth libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0
 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 libx11-xcb1"
# Debian's own python3 needs python3-venv for `python3 -m venv`
if [ ! -x .venv/bin/python ] && ! "$PY" -c "import ensurepip, venv" >/dev/null 2>&1; then QT_PKGS="$QT_PKGS python3-venv"; fi
# pyfim (KRIMP's itemset miner) is built from source: it needs a C compiler and Python's headers
if ! command -v cc >/dev/null 2>&1; then QT_PKGS="$QT_PKGS gcc libc6-dev python3-dev"; fi
if command -v apt-get >/dev/null 2>&1; then
  missing=$(for p in $QT_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
  if [ -n "$missing" ]; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "Installing Qt system libraries and fonts: $missing"
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
  # the Spark engine (--engine spark, engine/bigdata/spark_source.py) runs on a Java runtime; installed on its own
  # so that a machine where it cannot be installed still sets up (the Spark tests then say they were skipped).
  # Slim Debian images lack the man folder the JRE's post-install links into.
  if ! command -v java >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "Installing a Java runtime for the Spark engine..."
    $SUDO mkdir -p /usr/share/man/man1
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        default-jre-headless >/dev/null; } || echo "Java could not be installed: --engine spark and its tests are unavailable"
  fi
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
echo "Installing the project, its test tools and Spark into .venv (log: .venv/pip.log)..."
if ! .venv/bin/python -m pip install -e ".[test,spark]" > .venv/pip.log 2>&1; then
  tail -40 .venv/pip.log; echo "pip install failed: see .venv/pip.log"; exit 1
fi
echo "Set-up done: .venv is ready."
